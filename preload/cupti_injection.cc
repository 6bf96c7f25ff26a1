#include "preload/cupti_injection.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

#include "preload/capture_gate.h"
#include "preload/cupti_library.h"
#include "preload/cupti_records.h"
#include "preload/gpu_activity_queue.h"
#include "preload/raw_log.h"
#include "preload/recorder.h"
#include "preload/string_table.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

namespace {

// How often the flusher hands CUPTI's completed buffers over (ms);
// RLSCOPE_CUPTI_FLUSH_MS overrides it (docs/capture.md).
constexpr int64_t kDefaultPeriodicFlushMs = 250;
int64_t g_periodic_flush_ms = kDefaultPeriodicFlushMs;
// Activity buffers: CUPTI fills one per context/stream at a time; used
// buffers are recycled, so a few exist at once. The cap bounds memory if
// delivery stalls: CUPTI then drops (and counts) records.
constexpr size_t kBufferBytes = 4u << 20;
constexpr size_t kMaxBuffers = 64;

enum class CaptureState : int { kIdle, kActive, kFinished };

// No global here has a dynamic initializer (constinit says so where one
// could creep in): all are set before any constructor runs, so the
// preload's start-up never depends on link order.
constinit CuptiLibrary g_cupti{};
constinit CUpti_SubscriberHandle g_subscriber = nullptr;
constinit std::atomic<CaptureState> g_state{CaptureState::kIdle};
constinit pid_t g_capture_pid = 0;  // Fork children must not call the parent's CUPTI.
// Serialises flushes (the flusher's periodic one, exec, exit) so none runs
// after the final one.
constinit std::mutex g_control_mutex;
int64_t g_last_flush_ns = 0;
// Added to CUPTI's timestamps: 0 when CUPTI takes rlscope's clock through
// its timestamp callback; otherwise the measured offset to it.
int64_t g_timestamp_offset_ns = 0;

// Interned names of the enabled callbacks, by callback id.
uint32_t g_runtime_names[CUPTI_RUNTIME_TRACE_CBID_SIZE];
uint32_t g_driver_names[CUPTI_DRIVER_TRACE_CBID_SIZE];

// --- Activity buffers -------------------------------------------------------

constinit std::mutex g_pool_mutex;
// Made on first use (g_pool_mutex held), never destroyed (exit paths).
constinit std::vector<uint8_t*>* g_free_buffers = nullptr;
constinit size_t g_buffers_allocated = 0;

std::vector<uint8_t*>& FreeBuffersLocked() {
  if (g_free_buffers == nullptr) g_free_buffers = new std::vector<uint8_t*>();
  return *g_free_buffers;
}

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // As many as fit.
  *size = kBufferBytes;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  std::vector<uint8_t*>& free_buffers = FreeBuffersLocked();
  if (!free_buffers.empty()) {
    *buffer = free_buffers.back();
    free_buffers.pop_back();
    return;
  }
  *buffer = g_buffers_allocated < kMaxBuffers ? static_cast<uint8_t*>(aligned_alloc(8, kBufferBytes)) : nullptr;
  if (*buffer != nullptr) ++g_buffers_allocated;
  if (*buffer == nullptr) *size = 0;  // CUPTI drops records and counts them.
}

uint32_t InternKernelName(const char* name) { return StringTable::Intern(name); }

void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid_size) {
  if (buffer == nullptr) return;
  // Converted in chunks on the stack: the queue's lock is taken once per
  // chunk, and nothing is allocated per buffer.
  wire::GpuActivity converted[256];
  size_t count = 0;
  CUpti_Activity* record = nullptr;
  while (valid_size > 0 && g_cupti.ActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (!ConvertActivity(*record, &InternKernelName, g_timestamp_offset_ns, &converted[count])) continue;
    if (++count == std::size(converted)) {
      GpuActivityQueue::Push({converted, count});
      count = 0;
    }
  }
  if (count > 0) GpuActivityQueue::Push({converted, count});
  size_t dropped = 0;
  if (g_cupti.ActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    GpuActivityQueue::AddDropped(dropped);
  }
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  FreeBuffersLocked().push_back(buffer);
}

// --- API callbacks ----------------------------------------------------------

uint32_t CallbackNameId(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return id < CUPTI_RUNTIME_TRACE_CBID_SIZE ? g_runtime_names[id] : 0;
  return id < CUPTI_DRIVER_TRACE_CBID_SIZE ? g_driver_names[id] : 0;
}

// One enabled CUDA call entering or leaving. Only the outermost call of a
// thread is timed (the driver call inside a runtime call is part of it);
// the nested one is kept as an instant so its correlation id, which some
// copies and memsets carry, leads to the same call.
// ProfilerApiEdge: cudaProfilerStart/Stop or cuProfilerStart/Stop (which a
// program may call without libcudart: JAX, ctypes) as capture edges, when
// `--capture-range cudaProfilerApi` enabled their callbacks: open as a
// start returns, closed as a stop is entered.
bool g_profiler_callbacks = false;
void ProfilerApiEdge(CUpti_CallbackDomain domain, CUpti_CallbackId id, CUpti_ApiCallbackSite site) {
  const bool start = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? id == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                                                           : id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
  const bool stop = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? id == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                                                          : id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
  if (start && site == CUPTI_API_EXIT) CaptureGate::OnProfilerApi(true);
  if (stop && site == CUPTI_API_ENTER) CaptureGate::OnProfilerApi(false);
}

void CUPTIAPI OnApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (__builtin_expect(g_profiler_callbacks, 0) && !t_state.in_profiler_api_hook) {
    ProfilerApiEdge(domain, id, call->callbackSite);
  }
  ThreadState& state = t_state;
  if (call->callbackSite == CUPTI_API_ENTER) {
    const bool outermost = state.cupti_depth++ == 0;
    if (outermost) {
      const bool recorded = g_recording && !state.untraced;
      // Marked open for the reader's settled time (recorder.h); cleared at
      // the exit of this outermost call.
      if (recorded) NoteCallOpen(ThreadBuffer::kOpenCupti);
      *call->correlationData = recorded ? NowTicks() : 0;
    }
    return;
  }
  if (state.cupti_depth == 0) return;  // Enabled while this call was running.
  const uint16_t depth = state.cupti_depth--;
  if (!g_recording || state.untraced) return;
  uint16_t flags = domain == CUPTI_CB_DOMAIN_DRIVER_API ? wire::kCuptiDriverApi : 0;
  if (depth == 1) {
    const uint64_t begin = *call->correlationData;
    if (begin == 0) return;
    // After the record (a scope: NoteCallClosed runs as this returns).
    struct ClosesCall {
      ~ClosesCall() { NoteCallClosed(ThreadBuffer::kOpenCupti); }
    } closes;
    uint32_t name = CallbackNameId(domain, id);
    if (state.in_recorded_cuda_api) {
      flags |= wire::kCuptiSeenByInterposer;
      // The driver's call inside a hooked launch, copy, memset or wait:
      // named as the call the program made (the flag still says whose
      // callbacks it had, which prices it).
      if (domain == CUPTI_CB_DOMAIN_DRIVER_API && state.recorded_cuda_api_name != 0) {
        name = state.recorded_cuda_api_name;
      }
    }
    Record(wire::EventKind::kCuptiApi, name, begin, NowTicks(), call->correlationId, flags);
  } else if (depth == 2) {
    RecordInstant(wire::EventKind::kCuptiApi, CallbackNameId(domain, id), call->correlationId,
                  flags | wire::kCuptiNested);
  }
}

}  // namespace

// The calls whose GPU work or waiting rlscope must see when they bypass
// libcudart's PLT: launches, copies, memsets, graph launches and waits.
// Matched by name so new variants (_ptsz, _v2, Ex) are covered.
bool CuptiWatchesApi(std::string_view name) {
  constexpr std::string_view kPrefixes[] = {"cudaLaunch",
                                            "cudaMemcpy",
                                            "cudaMemset",
                                            "cudaGraphLaunch",
                                            "cudaDeviceSynchronize",
                                            "cudaStreamSynchronize",
                                            "cudaEventSynchronize",
                                            "cuLaunch",
                                            "cuMemcpy",
                                            "cuMemset",
                                            "cuGraphLaunch",
                                            "cuCtxSynchronize",
                                            "cuStreamSynchronize",
                                            "cuEventSynchronize"};
  for (std::string_view prefix : kPrefixes) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

namespace {

// ProfilerApi: the CUDA profiler API's start and stop, runtime and driver.
bool ProfilerApi(std::string_view name) {
  return name.starts_with("cudaProfilerStart") || name.starts_with("cudaProfilerStop") || name == "cuProfilerStart" ||
         name == "cuProfilerStop";
}

// CleanName: "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (CUPTI names
// callbacks after the API version that introduced them).
std::string_view CleanName(std::string_view name) {
  const size_t suffix = name.rfind("_v");
  if (suffix == std::string_view::npos || suffix + 2 >= name.size()) return name;
  for (size_t i = suffix + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, suffix);
}

// Which API callbacks are on. By default the driver's only: every launch,
// copy, memset and wait a runtime call makes runs through a driver call
// that CUPTI calls back for, and whose correlation id the GPU records then
// carry, so the runtime's own callbacks add nothing rlscope needs (a call
// through libcudart's PLT is timed and named by the hook around it) but
// cost as much again: on an H100, CUPTI added 2.4 us to a runtime launch
// with both domains' callbacks and 1.2 us with the driver's alone
// (scripts/device/RESULTS.md, 2026-12-06). RLSCOPE_CUPTI_CALLBACKS=all
// turns the runtime's on too, "none" leaves the activity records alone
// (their kernels tied to no call): diagnostics (docs/capture.md).
struct CallbackDomains {
  bool runtime = false;
  bool driver = true;
};
CallbackDomains SelectedDomains() {
  // A capture range on the profiler API takes its edges from both domains.
  if (CaptureGate::ProfilerApiControlled()) return {true, true};
  const char* value = getenv("RLSCOPE_CUPTI_CALLBACKS");
  const std::string_view chosen(value == nullptr ? "" : value);
  if (chosen == "all") return {true, true};
  if (chosen == "none") return {false, false};
  return {};
}

int EnableDomain(CUpti_CallbackDomain domain, uint32_t size, uint32_t* names) {
  int enabled = 0;
  for (uint32_t id = 1; id < size; ++id) {
    const char* name = nullptr;
    if (g_cupti.GetCallbackName(domain, id, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!CuptiWatchesApi(name) && !(CaptureGate::ProfilerApiControlled() && ProfilerApi(name))) continue;
    names[id] = StringTable::Intern(CleanName(name));
    if (g_cupti.EnableCallback(1, g_subscriber, domain, id) == CUPTI_SUCCESS) ++enabled;
  }
  return enabled;
}

// --- Start and end ----------------------------------------------------------

uint64_t CUPTIAPI RlscopeTimestamp() { return static_cast<uint64_t>(MonotonicNs()); }

// MeasureTimestampOffset: rlscope's clock minus CUPTI's, from the tightest
// of a few bracketing reads (for a CUPTI without the timestamp callback).
int64_t MeasureTimestampOffset() {
  int64_t best_width = INT64_MAX, offset = 0;
  for (int i = 0; i < 9; ++i) {
    uint64_t cupti_ns = 0;
    const int64_t before = MonotonicNs();
    if (g_cupti.GetTimestamp(&cupti_ns) != CUPTI_SUCCESS) return 0;
    const int64_t after = MonotonicNs();
    if (after - before < best_width) {
      best_width = after - before;
      offset = before + (after - before) / 2 - static_cast<int64_t>(cupti_ns);
    }
  }
  return offset;
}

void Missing(const char* format, ...) __attribute__((format(printf, 1, 2)));
void Missing(const char* format, ...) {
  char message[480];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  RawNotice("GPU activity will not be captured: %s", message);  // The report says it too.
  CaptureNotices::Post("gpu", "missing", message);
}

void FlushAtExit() { FlushGpuActivity(/*final=*/true); }

void StartCapture() {
  // Once per process: kIdle -> kFinished while starting (flushes stay
  // off), -> kActive when everything is in place; a failed start stays
  // kFinished.
  CaptureState expected = CaptureState::kIdle;
  if (!g_recording || !g_state.compare_exchange_strong(expected, CaptureState::kFinished)) return;
  char why[400] = {};
  if (!LoadCuptiLibrary(getenv("RLSCOPE_CUPTI_PATH"), &g_cupti, why, sizeof(why))) {
    Missing("%s", why);
    return;
  }
  // Thread ids in overhead records as the kernel's (our traces' tids).
  g_cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  // Before any activity kind is enabled, or early records keep CUPTI's clock.
  const bool own_clock = g_cupti.ActivityRegisterTimestampCallback != nullptr &&
                         g_cupti.ActivityRegisterTimestampCallback(&RlscopeTimestamp) == CUPTI_SUCCESS;
  g_timestamp_offset_ns = own_clock ? 0 : MeasureTimestampOffset();
  CUptiResult result = g_cupti.ActivityRegisterCallbacks(&OnBufferRequested, &OnBufferCompleted);
  if (result != CUPTI_SUCCESS) {
    Missing("CUPTI refused activity buffers (%s)", g_cupti.ErrorText(result));
    return;
  }
  result = g_cupti.Subscribe(&g_subscriber, &OnApiCallback, nullptr);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    Missing(
        "another CUPTI client (Nsight Systems, torch.profiler, ...) is attached to this process; "
        "run without it to see the GPU level");
    return;
  }
  if (result != CUPTI_SUCCESS) {
    Missing("CUPTI could not subscribe (%s): is there a usable GPU?", g_cupti.ErrorText(result));
    return;
  }
  g_profiler_callbacks = CaptureGate::ProfilerApiControlled();
  if (const char* flush_ms = getenv("RLSCOPE_CUPTI_FLUSH_MS"); flush_ms != nullptr) {
    const long long parsed = atoll(flush_ms);
    if (parsed > 0) g_periodic_flush_ms = parsed;
  }
  const CallbackDomains domains = SelectedDomains();
  const int runtime_callbacks =
      domains.runtime ? EnableDomain(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, g_runtime_names) : 0;
  const int driver_callbacks =
      domains.driver ? EnableDomain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, g_driver_names) : 0;
  char failed[240] = {};
  size_t failed_used = 0;
  bool kernels = true;
  for (CUpti_ActivityKind kind : kCapturedActivityKinds) {
    result = g_cupti.ActivityEnable(kind);
    if (result == CUPTI_SUCCESS) continue;
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) kernels = false;
    failed_used +=
        static_cast<size_t>(snprintf(failed + failed_used, sizeof(failed) - failed_used, "%sactivity kind %d: %s",
                                     failed_used > 0 ? "; " : "", static_cast<int>(kind), g_cupti.ErrorText(result)));
    if (failed_used >= sizeof(failed)) failed_used = sizeof(failed) - 1;
  }
  g_capture_pid = getpid();
  g_last_flush_ns = MonotonicNs();
  g_state.store(CaptureState::kActive, std::memory_order_release);
  // Registered after CUPTI was loaded, so it runs before CUPTI's own
  // teardown (exit handlers run in reverse order of registration).
  atexit(&FlushAtExit);
  char message[1024];  // Notices keep the first 479 bytes.
  if (!kernels) {
    snprintf(message, sizeof(message), "CUPTI (%s) gives no kernel activity (%s): GPU times are missing", g_cupti.path,
             failed);
    RawNotice("%s", message);
    CaptureNotices::Post("gpu", "degraded", message);
    return;
  }
  snprintf(message, sizeof(message), "CUPTI %s: %d runtime and %d driver callbacks; GPU times %s%s%s", g_cupti.path,
           runtime_callbacks, driver_callbacks,
           own_clock ? "on rlscope's clock" : "aligned to rlscope's clock by a measured offset",
           failed_used > 0 ? "; not captured: " : "", failed);
  CaptureNotices::Post("gpu", failed_used > 0 ? "degraded" : "captured", message);
}

}  // namespace

void FlushGpuActivity(bool final) {
  if (g_state.load(std::memory_order_acquire) != CaptureState::kActive || getpid() != g_capture_pid) return;
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_state.load(std::memory_order_acquire) != CaptureState::kActive) return;
  // The final flush's record begins in the past: marked. Only then (a
  // mark registers the thread, and a thread that never recorded must not
  // appear for a flush that records nothing).
  const MarkScope open_call(ThreadBuffer::kOpenOther, final);
  const uint64_t begin = NowTicks();
  g_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_last_flush_ns = MonotonicNs();
  if (final) {
    g_state.store(CaptureState::kFinished, std::memory_order_release);
    // At exit or exec the program's own thread waits for it: rlscope's time.
    if (g_recording && !t_state.untraced) {
      Record(rlscope::wire::EventKind::kProfilerOverhead, StringTable::Intern("CUPTI final flush"), begin, NowTicks());
    }
  }
}

void MaybeFlushGpuActivity() {
  if (g_state.load(std::memory_order_acquire) != CaptureState::kActive || getpid() != g_capture_pid) return;
  // Never wait: the final flush may hold the lock at exit.
  std::unique_lock<std::mutex> lock(g_control_mutex, std::try_to_lock);
  if (!lock.owns_lock() || g_state.load(std::memory_order_acquire) != CaptureState::kActive) return;
  const int64_t now = MonotonicNs();
  if (now - g_last_flush_ns < g_periodic_flush_ms * 1'000'000) return;
  g_cupti.ActivityFlushAll(0);  // Completed records only: cheap, no waiting on the GPU.
  g_last_flush_ns = now;
}

}  // namespace rlscope::preload

// Called by the CUDA driver from cuInit when CUDA_INJECTION64_PATH names
// this library. Returns non-zero: the injection loaded (capture failures
// are ours to report, not the driver's).
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  using namespace rlscope::preload;
  // Runs inside the program's first CUDA call: its time is rlscope's, not
  // the call's (the report shows it as Profiler time).
  const MarkScope open_call(ThreadBuffer::kOpenOther);  // Its record begins in the past.
  const uint64_t begin = NowTicks();
  StartCapture();
  if (g_recording && !t_state.untraced) {
    Record(rlscope::wire::EventKind::kProfilerOverhead, StringTable::Intern("CUPTI start-up"), begin, NowTicks());
  }
  return 1;
}
