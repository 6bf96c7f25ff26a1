#include "preload/cuda_runtime_hooks.h"

#include <cuda_profiler_api.h>

#include <atomic>
#include <cstdint>

#include "preload/capture_gate.h"
#include "preload/cuda_runtime_api_list.h"
#include "preload/cupti_injection.h"
#include "preload/native_stack_sampler.h"
#include "preload/raw_log.h"
#include "preload/real_symbol.h"
#include "preload/recorder.h"
#include "preload/string_table.h"

namespace rlscope::preload {

namespace {

enum CudaApi : int {
#define RLSCOPE_API_ENUM(name, params, args) kApi_##name,
  RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_API_ENUM)
#undef RLSCOPE_API_ENUM
      kCudaApiCount
};

constexpr const char* kApiNames[kCudaApiCount] = {
#define RLSCOPE_API_NAME(name, params, args) #name,
    RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_API_NAME)
#undef RLSCOPE_API_NAME
};

// Our definitions carry the version libcudart.so.13 (preload.map), so they
// bind exactly the references to CUDA 13's runtime (name@libcudart.so.13)
// and leave a CUDA 12 runtime loaded alongside alone; the next definition
// is looked up with that version.
constexpr const char* kCudartVersion = "libcudart.so.13";
constexpr const char* kCudartLibraryHint = "libcudart.so";

uint32_t g_api_name_ids[kCudaApiCount];
// The name a call gives CUPTI's view of the driver call inside it: its
// own where CUPTI watches it, else 0 (the driver's name stays).
uint32_t g_cupti_view_name_ids[kCudaApiCount];
std::atomic<void*> g_real_functions[kCudaApiCount];
// An API whose real definition was not found, remembered so the search and
// its warning happen once, not on every call.
std::atomic<bool> g_unresolvable[kCudaApiCount];

// ResolveCudaFunctionOnce: the next definition of `name`, stored in `slot`;
// when there is none, warns once and remembers it in `unresolvable`.
void* ResolveCudaFunctionOnce(const char* name, std::atomic<void*>& slot, std::atomic<bool>& unresolvable) {
  if (unresolvable.load(std::memory_order_relaxed)) return nullptr;
  void* real = ResolveNextSymbol(name, kCudartVersion, kCudartLibraryHint);
  if (real == nullptr) {
    if (!unresolvable.exchange(true)) {
      RawLog("%s: no libcudart.so.13 definition is loaded; returning cudaErrorInitializationError", name);
    }
    return nullptr;
  }
  slot.store(real, std::memory_order_release);
  return real;
}

void* ResolveRealCudaFunction(CudaApi api) {
  return ResolveCudaFunctionOnce(kApiNames[api], g_real_functions[api], g_unresolvable[api]);
}

inline void* RealCudaFunction(CudaApi api) {
  void* real = g_real_functions[api].load(std::memory_order_acquire);
  return real != nullptr ? real : ResolveRealCudaFunction(api);
}

}  // namespace

void InternCudaApiNames() {
  for (int api = 0; api < kCudaApiCount; ++api) {
    g_api_name_ids[api] = StringTable::Intern(kApiNames[api]);
    g_cupti_view_name_ids[api] = CuptiWatchesApi(kApiNames[api]) ? g_api_name_ids[api] : 0;
  }
}

}  // namespace rlscope::preload

// The wrappers. Only the outermost hook of a thread records (a runtime call
// made from inside another is part of it).
#define RLSCOPE_DEFINE_CUDA_HOOK(name, params, args)                                             \
  extern "C" __attribute__((visibility("default"))) cudaError_t name params {                    \
    using namespace rlscope::preload;                                                            \
    using RealFunction = cudaError_t(*) params;                                                  \
    auto real = reinterpret_cast<RealFunction>(RealCudaFunction(kApi_##name));                   \
    if (__builtin_expect(real == nullptr, 0)) return cudaErrorInitializationError;               \
    HookScope scope;                                                                             \
    if (!scope.recording()) return real args;                                                    \
    const MarkScope mark(ThreadBuffer::kOpenCudaRuntime);                                        \
    uint64_t begin = NowTicks();                                                                 \
    if (MaybeSampleNativeStack(begin)) begin = NowTicks(); /* The sample is not API time. */     \
    t_state.in_recorded_cuda_api = true;                                                         \
    t_state.recorded_cuda_api_name = g_cupti_view_name_ids[kApi_##name];                         \
    const cudaError_t result = real args;                                                        \
    t_state.in_recorded_cuda_api = false;                                                        \
    Record(::rlscope::wire::EventKind::kCudaApi, g_api_name_ids[kApi_##name], begin, NowTicks(), \
           static_cast<uint64_t>(result));                                                       \
    return result;                                                                               \
  }
RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_DEFINE_CUDA_HOOK)
#undef RLSCOPE_DEFINE_CUDA_HOOK

// cudaProfilerStart/Stop: no parameters, so not in the X-macro list (the
// fake's stand-ins there take CUPTI's parameter structs, which these lack).
// Recorded as CUDA API calls like the others; with `--capture-range
// cudaProfilerApi` they also open and close capture: open once Start
// returns, closed as Stop is entered, so neither call's own time is inside.
namespace rlscope::preload {
namespace {

using ProfilerFunction = cudaError_t (*)();

cudaError_t CallProfilerApi(const char* name, std::atomic<void*>& real_slot, std::atomic<bool>& unresolvable,
                            std::atomic<uint32_t>& name_id, bool start) {
  void* real = real_slot.load(std::memory_order_acquire);
  if (real == nullptr) real = ResolveCudaFunctionOnce(name, real_slot, unresolvable);
  if (real == nullptr) return cudaErrorInitializationError;
  HookScope scope;
  if (!start) CaptureGate::OnProfilerApi(false);
  const bool was_inside = t_state.in_profiler_api_hook;
  t_state.in_profiler_api_hook = true;
  cudaError_t result;
  if (!scope.recording()) {
    result = reinterpret_cast<ProfilerFunction>(real)();
  } else {
    uint32_t id = name_id.load(std::memory_order_relaxed);
    if (id == 0) {
      id = StringTable::Intern(name);
      name_id.store(id, std::memory_order_relaxed);
    }
    const MarkScope mark(ThreadBuffer::kOpenCudaRuntime);
    const uint64_t begin = NowTicks();
    t_state.in_recorded_cuda_api = true;
    t_state.recorded_cuda_api_name = 0;  // Not a function CUPTI watches.
    result = reinterpret_cast<ProfilerFunction>(real)();
    t_state.in_recorded_cuda_api = false;
    Record(wire::EventKind::kCudaApi, id, begin, NowTicks(), static_cast<uint64_t>(result));
  }
  t_state.in_profiler_api_hook = was_inside;
  if (start) CaptureGate::OnProfilerApi(true);
  return result;
}

std::atomic<void*> g_real_profiler_start{nullptr}, g_real_profiler_stop{nullptr};
std::atomic<bool> g_profiler_start_unresolvable{false}, g_profiler_stop_unresolvable{false};
std::atomic<uint32_t> g_profiler_start_id{0}, g_profiler_stop_id{0};

}  // namespace
}  // namespace rlscope::preload

extern "C" __attribute__((visibility("default"))) cudaError_t cudaProfilerStart() {
  using namespace rlscope::preload;
  return CallProfilerApi("cudaProfilerStart", g_real_profiler_start, g_profiler_start_unresolvable, g_profiler_start_id,
                         true);
}

extern "C" __attribute__((visibility("default"))) cudaError_t cudaProfilerStop() {
  using namespace rlscope::preload;
  return CallProfilerApi("cudaProfilerStop", g_real_profiler_stop, g_profiler_stop_unresolvable, g_profiler_stop_id,
                         false);
}
