#include "preload/cuda_runtime_hooks.h"

#include <atomic>
#include <cstdint>

#include "preload/cuda_runtime_api_list.h"
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
std::atomic<void*> g_real_functions[kCudaApiCount];
// An API whose real definition was not found, remembered so the search and
// its warning happen once, not on every call.
std::atomic<bool> g_unresolvable[kCudaApiCount];

void* ResolveRealCudaFunction(CudaApi api) {
  if (g_unresolvable[api].load(std::memory_order_relaxed)) return nullptr;
  void* real = ResolveNextSymbol(kApiNames[api], kCudartVersion, kCudartLibraryHint);
  if (real == nullptr) {
    if (!g_unresolvable[api].exchange(true)) {
      RawLog("%s: no libcudart.so.13 definition is loaded; returning cudaErrorInitializationError", kApiNames[api]);
    }
    return nullptr;
  }
  g_real_functions[api].store(real, std::memory_order_release);
  return real;
}

inline void* RealCudaFunction(CudaApi api) {
  void* real = g_real_functions[api].load(std::memory_order_acquire);
  return real != nullptr ? real : ResolveRealCudaFunction(api);
}

}  // namespace

void InternCudaApiNames() {
  for (int api = 0; api < kCudaApiCount; ++api) g_api_name_ids[api] = StringTable::Intern(kApiNames[api]);
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
    uint64_t begin = NowTicks();                                                                 \
    if (MaybeSampleNativeStack(begin)) begin = NowTicks(); /* The sample is not API time. */     \
    t_state.in_recorded_cuda_api = true;                                                         \
    const cudaError_t result = real args;                                                        \
    t_state.in_recorded_cuda_api = false;                                                        \
    Record(::rlscope::wire::EventKind::kCudaApi, g_api_name_ids[kApi_##name], begin, NowTicks(), \
           static_cast<uint64_t>(result));                                                       \
    return result;                                                                               \
  }
RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_DEFINE_CUDA_HOOK)
#undef RLSCOPE_DEFINE_CUDA_HOOK
