// Self-test of the fake CUPTI (fake_cupti.cc) and the fake runtime's
// driver emulation (fake_cudart.cc), without rlscope: this program plays
// the profiler. It dlopens the fake libcupti.so.13 RTLD_LOCAL (as the
// preload does), subscribes and collects activity buffers, makes fake CUDA
// calls and checks what a profiler relies on: paired, nested callbacks,
// correlation ids shared by callbacks and records, the virtual GPU
// timeline on the registered clock, buffers, drops, failure knobs, the
// ledger, and injection through CUDA_INJECTION64_PATH.
//
//   fake_cupti_selftest LIBCUPTI_SO INJECTION_SO
//
// Built a second time as INJECTION_SO (RLSCOPE_SELFTEST_INJECTION): a
// stand-in profiler with InitializeInjection, for the injection checks.
// Any mismatch prints what and exits non-zero.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// The self-test's scratch directory, removed by its own process even when
// a check fails.
std::string g_scratch;
pid_t g_scratch_owner = 0;

void RemoveScratch() {
  if (g_scratch.empty() || getpid() != g_scratch_owner) return;
  if (DIR* directory = opendir(g_scratch.c_str())) {
    while (const dirent* entry = readdir(directory)) {
      if (entry->d_name[0] != '.') unlink((g_scratch + "/" + entry->d_name).c_str());
    }
    closedir(directory);
  }
  rmdir(g_scratch.c_str());
}

}  // namespace

#define SELFTEST_CHECK(condition, ...)                                                       \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      fprintf(stderr, "fake_cupti_selftest: FAILED at line %d: %s: ", __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                                          \
      fprintf(stderr, "\n");                                                                 \
      fflush(stderr);                                                                        \
      RemoveScratch();                                                                       \
      _exit(1);                                                                              \
    }                                                                                        \
  } while (0)

namespace {

// The CUPTI entry points, resolved as a profiler resolves them.
struct Cupti {
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**);
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**);
  CUptiResult (*ActivityFlushAll)(uint32_t);
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*);
  CUptiResult (*GetResultString)(CUptiResult, const char**);
  CUptiResult (*GetTimestamp)(uint64_t*);
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
  CUptiResult (*Finalize)();
  CUptiResult (*ActivityFlushPeriod)(uint32_t);
};

template <typename Function>
void Resolve(void* handle, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(dlsym(handle, name));
  SELFTEST_CHECK(*function != nullptr, "the fake CUPTI lacks %s", name);
}

Cupti LoadCupti(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  SELFTEST_CHECK(handle != nullptr, "cannot load %s: %s", path, dlerror());
  Cupti cupti;
  Resolve(handle, "cuptiSubscribe", &cupti.Subscribe);
  Resolve(handle, "cuptiUnsubscribe", &cupti.Unsubscribe);
  Resolve(handle, "cuptiEnableCallback", &cupti.EnableCallback);
  Resolve(handle, "cuptiGetCallbackName", &cupti.GetCallbackName);
  Resolve(handle, "cuptiActivityEnable", &cupti.ActivityEnable);
  Resolve(handle, "cuptiActivityDisable", &cupti.ActivityDisable);
  Resolve(handle, "cuptiActivityRegisterCallbacks", &cupti.ActivityRegisterCallbacks);
  Resolve(handle, "cuptiActivityRegisterTimestampCallback", &cupti.ActivityRegisterTimestampCallback);
  Resolve(handle, "cuptiActivityGetNextRecord", &cupti.ActivityGetNextRecord);
  Resolve(handle, "cuptiActivityFlushAll", &cupti.ActivityFlushAll);
  Resolve(handle, "cuptiActivityGetNumDroppedRecords", &cupti.ActivityGetNumDroppedRecords);
  Resolve(handle, "cuptiGetResultString", &cupti.GetResultString);
  Resolve(handle, "cuptiGetTimestamp", &cupti.GetTimestamp);
  Resolve(handle, "cuptiSetThreadIdType", &cupti.SetThreadIdType);
  Resolve(handle, "cuptiFinalize", &cupti.Finalize);
  Resolve(handle, "cuptiActivityFlushPeriod", &cupti.ActivityFlushPeriod);
  return cupti;
}

}  // namespace

#ifdef RLSCOPE_SELFTEST_INJECTION

// ---- The injected stand-in profiler ----

namespace {
std::atomic<int> g_injections{0};
std::atomic<int> g_callbacks{0};
std::atomic<int> g_kernels{0};
std::atomic<uint64_t> g_first_kernel_start{0};
Cupti g_injected;

void CUPTIAPI CountCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) { ++g_callbacks; }
void CUPTIAPI Request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, 4096));
  *size = 4096;
  *max_records = 0;
}
void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (g_injected.ActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    uint64_t expected = 0;
    g_first_kernel_start.compare_exchange_strong(expected, reinterpret_cast<CUpti_ActivityKernel10*>(record)->start);
    ++g_kernels;
  }
  free(buffer);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  ++g_injections;
  // Real profilers call the runtime from here; that must not deadlock.
  SELFTEST_CHECK(cudaDeviceSynchronize() == cudaSuccess, "runtime call inside InitializeInjection");
  g_injected = LoadCupti(getenv("RLSCOPE_CUPTI_PATH"));
  CUpti_SubscriberHandle subscriber;
  SELFTEST_CHECK(g_injected.Subscribe(&subscriber, CountCallback, nullptr) == CUPTI_SUCCESS, "injected subscribe");
  SELFTEST_CHECK(g_injected.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                           CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == CUPTI_SUCCESS,
                 "injected enable");
  SELFTEST_CHECK(g_injected.ActivityRegisterCallbacks(Request, Completed) == CUPTI_SUCCESS, "injected buffers");
  SELFTEST_CHECK(g_injected.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS, "injected kind");
  return 1;
}

extern "C" __attribute__((visibility("default"))) void rlscope_selftest_injection_state(int* injections, int* callbacks,
                                                                                        int* kernels,
                                                                                        uint64_t* first_start) {
  if (g_injections > 0) g_injected.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  *injections = g_injections;
  *callbacks = g_callbacks;
  *kernels = g_kernels;
  *first_start = g_first_kernel_start;
}

#else  // The self-test program.

extern "C" void rlscope_fake_set_operation(const char* operation);
extern "C" void rlscope_fake_library_gemm(int kernels);

namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000 + uint64_t(ts.tv_nsec);
}

// The profiler's clock: far from CLOCK_REALTIME, so a record stamped by any
// other clock stands out.
constexpr uint64_t kClockOffset = 5000000000000000000ULL;
uint64_t TestClock() { return kClockOffset + ClockNs(CLOCK_MONOTONIC); }

const char* g_cupti_path;
const char* g_injection_path;
Cupti g_cupti;
CUpti_SubscriberHandle g_subscriber;

cudaStream_t StreamAt(uintptr_t address) { return reinterpret_cast<cudaStream_t>(address); }

void LaunchKernel(cudaStream_t stream) {
  static int kernel_stub;
  SELFTEST_CHECK(cudaLaunchKernel(&kernel_stub, dim3(3), dim3(64), nullptr, 0, stream) == cudaSuccess, "launch");
}

// ---- What the profiler saw ----

struct Event {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CUpti_ApiCallbackSite site;
  uint32_t correlation_id;
  uint64_t* correlation_data;
  uint64_t correlation_value;  // *correlation_data when the event came
  std::string function;
  pid_t thread;
  uint64_t clock;
  bool has_context;
  bool has_symbol;
  int return_value;  // At EXIT.
  unsigned grid_x;   // From functionParams, for launches.
};

struct Records {
  std::vector<CUpti_ActivityKernel10> kernels;
  std::vector<CUpti_ActivityMemcpy6> memcpys;
  std::vector<CUpti_ActivityMemset4> memsets;
  std::vector<CUpti_ActivityOverhead3> overheads;
  int completions = 0;
  int empty_completions = 0;
};

std::mutex g_mutex;  // The profiler's lock, taken in every callback.
std::vector<Event> g_events;
Records g_records;

enum class BufferMode { kNormal, kNull, kTooSmall };
std::atomic<BufferMode> g_buffer_mode{BufferMode::kNormal};
constexpr size_t kBufferBytes = 1024;  // Small: many completions.

void CUPTIAPI ApiCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  SELFTEST_CHECK(userdata == &g_events, "userdata passed through");
  const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  Event event{};
  event.domain = domain;
  event.cbid = cbid;
  event.site = data->callbackSite;
  event.correlation_id = data->correlationId;
  event.correlation_data = data->correlationData;
  event.function = data->functionName != nullptr ? data->functionName : "";
  event.thread = gettid();
  event.clock = TestClock();
  event.has_context = data->context != nullptr;
  event.has_symbol = data->symbolName != nullptr;
  SELFTEST_CHECK(data->correlationData != nullptr && data->functionReturnValue != nullptr, "callback data slots");
  if (data->callbackSite == CUPTI_API_ENTER) {
    *data->correlationData = 0xC0FFEE00000000ULL | data->correlationId;
  } else {
    event.return_value = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                             ? static_cast<int>(*static_cast<const cudaError_t*>(data->functionReturnValue))
                             : static_cast<int>(*static_cast<const CUresult*>(data->functionReturnValue));
  }
  event.correlation_value = *data->correlationData;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    event.grid_x = static_cast<const cudaLaunchKernel_v7000_params*>(data->functionParams)->gridDim.x;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
    event.grid_x = static_cast<const cuLaunchKernel_params*>(data->functionParams)->gridDimX;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.push_back(event);
}

void CUPTIAPI RequestBuffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  switch (g_buffer_mode.load()) {
    case BufferMode::kNormal:
      *buffer = static_cast<uint8_t*>(aligned_alloc(8, kBufferBytes));
      *size = kBufferBytes;
      return;
    case BufferMode::kNull:
      *buffer = nullptr;
      *size = 0;
      return;
    case BufferMode::kTooSmall:
      *buffer = static_cast<uint8_t*>(aligned_alloc(8, 16));
      *size = 16;
      return;
  }
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  // Calls back into CUPTI (here: what takes its lock), as profilers do:
  // must not deadlock.
  SELFTEST_CHECK(g_cupti.ActivityFlushPeriod(0) == CUPTI_SUCCESS, "CUPTI call in the completion callback");
  SELFTEST_CHECK(valid <= size, "validSize %zu within size %zu", valid, size);
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_records.completions;
  if (valid == 0) ++g_records.empty_completions;
  CUpti_Activity* record = nullptr;
  CUptiResult status;
  while ((status = g_cupti.ActivityGetNextRecord(buffer, valid, &record)) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        g_records.kernels.push_back(*reinterpret_cast<CUpti_ActivityKernel10*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        g_records.memcpys.push_back(*reinterpret_cast<CUpti_ActivityMemcpy6*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        g_records.memsets.push_back(*reinterpret_cast<CUpti_ActivityMemset4*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        g_records.overheads.push_back(*reinterpret_cast<CUpti_ActivityOverhead3*>(record));
        break;
      default: SELFTEST_CHECK(false, "unexpected record kind %d", static_cast<int>(record->kind));
    }
  }
  SELFTEST_CHECK(status == CUPTI_ERROR_MAX_LIMIT_REACHED, "buffer walk ended with %d", static_cast<int>(status));
  free(buffer);
}

std::vector<Event> TakeEvents() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_events, {});
}

Records TakeRecords() {
  SELFTEST_CHECK(g_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS, "flush");
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_records, {});
}

// ---- Checks ----

// One API call as its callbacks told it.
struct Call {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  uint32_t correlation_id;
  uint64_t enter_clock;
  uint64_t exit_clock;
  uint32_t parent_id;  // The enclosing call's correlation id; 0 for none.
  unsigned grid_x;
};

// Every ENTER has its EXIT on the same thread, properly nested, with the
// same correlation id and correlationData slot (and the value written at
// ENTER still there); ids are unique.
std::map<uint32_t, Call> PairCalls(const std::vector<Event>& events) {
  std::map<pid_t, std::vector<const Event*> > stacks;
  std::map<uint32_t, Call> calls;
  for (const Event& event : events) {
    std::vector<const Event*>& stack = stacks[event.thread];
    SELFTEST_CHECK(event.has_context && !event.has_symbol, "context set, symbolName null (%s)", event.function.c_str());
    if (event.site == CUPTI_API_ENTER) {
      SELFTEST_CHECK(event.correlation_id != 0, "a correlation id for %s", event.function.c_str());
      stack.push_back(&event);
      continue;
    }
    SELFTEST_CHECK(!stack.empty(), "EXIT of %s without ENTER", event.function.c_str());
    const Event& enter = *stack.back();
    stack.pop_back();
    SELFTEST_CHECK(enter.domain == event.domain && enter.cbid == event.cbid && enter.function == event.function,
                   "EXIT of %s closes ENTER of %s", event.function.c_str(), enter.function.c_str());
    SELFTEST_CHECK(enter.correlation_id == event.correlation_id, "%s: correlation id %u at ENTER, %u at EXIT",
                   event.function.c_str(), enter.correlation_id, event.correlation_id);
    SELFTEST_CHECK(enter.correlation_data == event.correlation_data, "%s: correlationData slot changed",
                   event.function.c_str());
    SELFTEST_CHECK(event.correlation_value == (0xC0FFEE00000000ULL | event.correlation_id),
                   "%s: correlationData value lost", event.function.c_str());
    SELFTEST_CHECK(event.return_value == 0, "%s returned %d", event.function.c_str(), event.return_value);
    Call call{event.domain, event.cbid,  event.correlation_id,
              enter.clock,  event.clock, stack.empty() ? 0u : stack.back()->correlation_id,
              enter.grid_x};
    SELFTEST_CHECK(calls.emplace(call.correlation_id, call).second, "correlation id %u reused", call.correlation_id);
  }
  for (const auto& [thread, stack] : stacks) SELFTEST_CHECK(stack.empty(), "ENTER without EXIT on %d", thread);
  return calls;
}

std::set<uint32_t> IdsOf(const std::map<uint32_t, Call>& calls, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         bool nested) {
  std::set<uint32_t> ids;
  for (const auto& [id, call] : calls) {
    if (call.domain == domain && call.cbid == cbid && (call.parent_id != 0) == nested) ids.insert(id);
  }
  return ids;
}

// A GPU interval on a stream, and the API call that put it there.
struct Work {
  uint32_t stream;
  uint64_t start;
  uint64_t end;
  uint32_t correlation_id;
};

// The virtual timeline: each record starts 2 us after its call returned or
// its stream's previous work ended, whichever is later; all on TestClock.
void CheckTimeline(std::vector<Work> work, const std::map<uint32_t, Call>& calls) {
  std::sort(work.begin(), work.end(), [](const Work& a, const Work& b) {
    return a.stream != b.stream ? a.stream < b.stream : a.start < b.start;
  });
  std::map<uint32_t, uint64_t> stream_end;
  for (const Work& w : work) {
    const auto call = calls.find(w.correlation_id);
    SELFTEST_CHECK(call != calls.end(), "record with correlation id %u has no call", w.correlation_id);
    SELFTEST_CHECK(w.start >= kClockOffset && w.end > w.start, "record on the registered clock (start %llu)",
                   static_cast<unsigned long long>(w.start));
    const uint64_t previous_end = stream_end[w.stream];
    const uint64_t earliest = std::max(call->second.enter_clock, previous_end) + 2000;
    const uint64_t latest = std::max(call->second.exit_clock, previous_end) + 2000;
    SELFTEST_CHECK(w.start >= earliest && w.start <= latest,
                   "record %u starts at %llu, outside [%llu, %llu] (stream %u)", w.correlation_id,
                   static_cast<unsigned long long>(w.start), static_cast<unsigned long long>(earliest),
                   static_cast<unsigned long long>(latest), w.stream);
    stream_end[w.stream] = w.end;
  }
}

void CheckFailureKnobs() {
  CUpti_SubscriberHandle subscriber;
  setenv("RLSCOPE_FAKE_CUPTI_FAIL", "multiple", 1);
  SELFTEST_CHECK(
      g_cupti.Subscribe(&subscriber, ApiCallback, &g_events) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
      "RLSCOPE_FAKE_CUPTI_FAIL=multiple");
  setenv("RLSCOPE_FAKE_CUPTI_FAIL", "nogpu", 1);
  SELFTEST_CHECK(g_cupti.Subscribe(&subscriber, ApiCallback, &g_events) == CUPTI_ERROR_UNKNOWN,
                 "RLSCOPE_FAKE_CUPTI_FAIL=nogpu subscribe");
  SELFTEST_CHECK(g_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_ERROR_UNKNOWN,
                 "RLSCOPE_FAKE_CUPTI_FAIL=nogpu activity");
  unsetenv("RLSCOPE_FAKE_CUPTI_FAIL");
}

void CheckNames() {
  const char* name = nullptr;
  SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                         &name) == CUPTI_SUCCESS &&
                     strcmp(name, "cudaLaunchKernel_v7000") == 0,
                 "runtime name");
  SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                                         &name) == CUPTI_SUCCESS &&
                     strcmp(name, "cudaMemcpy_v3020") == 0,
                 "runtime name");
  SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &name) ==
                         CUPTI_SUCCESS &&
                     strcmp(name, "cuLaunchKernel") == 0,
                 "driver name");
  SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
                                         &name) == CUPTI_SUCCESS &&
                     strcmp(name, "cuMemcpyDtoHAsync_v2") == 0,
                 "driver name");
  for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id) {
    SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) == CUPTI_SUCCESS && name != nullptr,
                   "runtime id %u", id);
  }
  for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
    SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS && name != nullptr,
                   "driver id %u", id);
  }
  for (uint32_t id : {0u, uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE}}) {
    name = "stale";
    SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) == CUPTI_ERROR_INVALID_PARAMETER &&
                       name == nullptr,
                   "invalid runtime id %u", id);
  }
  name = "stale";
  SELFTEST_CHECK(g_cupti.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, &name) ==
                         CUPTI_ERROR_INVALID_PARAMETER &&
                     name == nullptr,
                 "invalid driver id");
  SELFTEST_CHECK(g_cupti.GetResultString(CUPTI_ERROR_MAX_LIMIT_REACHED, &name) == CUPTI_SUCCESS &&
                     strcmp(name, "CUPTI_ERROR_MAX_LIMIT_REACHED") == 0,
                 "result string");
}

void CheckGetNextRecord() {
  alignas(8) uint8_t buffer[256] = {};
  CUpti_Activity* record = nullptr;
  SELFTEST_CHECK(g_cupti.ActivityGetNextRecord(buffer, 0, &record) == CUPTI_ERROR_MAX_LIMIT_REACHED, "empty buffer");
  SELFTEST_CHECK(g_cupti.ActivityGetNextRecord(nullptr, 8, &record) == CUPTI_ERROR_INVALID_PARAMETER, "null buffer");
  const int garbage = 0x5a5a5a;
  memcpy(buffer, &garbage, sizeof(garbage));
  SELFTEST_CHECK(g_cupti.ActivityGetNextRecord(buffer, sizeof(buffer), &record) == CUPTI_ERROR_INVALID_KIND,
                 "garbage kind");
  const CUpti_ActivityKind kernel = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  memcpy(buffer, &kernel, sizeof(kernel));
  SELFTEST_CHECK(g_cupti.ActivityGetNextRecord(buffer, 64, &record) == CUPTI_ERROR_INVALID_KIND, "truncated record");
}

// Calls in one thread: launches (nested driver calls), copies, memsets on
// a stream, library launches; then every callback and record is matched.
void CheckSingleThread() {
  rlscope_fake_set_operation("op_a");
  constexpr int kSteps = 50;
  static char host[1000];
  void* device = nullptr;
  SELFTEST_CHECK(cudaMalloc(&device, 1 << 20) == cudaSuccess && device != nullptr, "malloc");
  const cudaStream_t stream = StreamAt(0x1234);
  for (int i = 0; i < kSteps; ++i) {
    LaunchKernel(nullptr);
    SELFTEST_CHECK(cudaMemcpy(device, host, sizeof(host), cudaMemcpyHostToDevice) == cudaSuccess, "memcpy");
    SELFTEST_CHECK(cudaMemsetAsync(device, 7, 4096, stream) == cudaSuccess, "memset");
  }
  rlscope_fake_library_gemm(3);
  rlscope_fake_set_operation("(none)");

  const std::vector<Event> events = TakeEvents();
  const Records records = TakeRecords();
  const std::map<uint32_t, Call> calls = PairCalls(events);

  const auto launches =
      IdsOf(calls, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, false);
  const auto nested = IdsOf(calls, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, true);
  const auto library = IdsOf(calls, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, false);
  const auto copies = IdsOf(calls, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, false);
  const auto memsets = IdsOf(calls, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, false);
  SELFTEST_CHECK(launches.size() == kSteps && nested.size() == kSteps && library.size() == 3 &&
                     copies.size() == kSteps && memsets.size() == kSteps,
                 "calls seen: %zu launches, %zu nested, %zu library, %zu copies, %zu memsets", launches.size(),
                 nested.size(), library.size(), copies.size(), memsets.size());
  SELFTEST_CHECK(calls.size() == 4 * kSteps + 3, "no callbacks of disabled cbids (%zu calls)", calls.size());
  for (uint32_t id : nested) {
    const Call& driver = calls.at(id);
    SELFTEST_CHECK(launches.count(driver.parent_id) == 1 && id > driver.parent_id,
                   "driver call %u nests in a runtime launch", id);
    SELFTEST_CHECK(driver.grid_x == 3 && calls.at(driver.parent_id).grid_x == 3, "launch parameters passed");
  }
  for (const Event& event : events) {
    if (event.domain == CUPTI_CB_DOMAIN_RUNTIME_API && event.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
      SELFTEST_CHECK(event.function == "cudaLaunchKernel", "functionName %s", event.function.c_str());
    if (event.domain == CUPTI_CB_DOMAIN_DRIVER_API)
      SELFTEST_CHECK(event.function == "cuLaunchKernel", "functionName %s", event.function.c_str());
  }

  std::vector<Work> work;
  std::set<uint32_t> kernel_ids, gemm_ids;
  for (const CUpti_ActivityKernel10& kernel : records.kernels) {
    const uint64_t start = kernel.start, end = kernel.end;
    const uint32_t id = kernel.correlationId, stream_id = kernel.streamId;
    const bool gemm = strcmp(kernel.name, "fake_gemm_kernel") == 0;
    SELFTEST_CHECK(gemm || strcmp(kernel.name, "fake_kernel") == 0, "kernel name %s", kernel.name);
    SELFTEST_CHECK(end - start == (gemm ? 7000u : 6000u), "kernel duration %llu",
                   static_cast<unsigned long long>(end - start));
    SELFTEST_CHECK(kernel.deviceId == 0 && kernel.contextId == 1 && stream_id == 0, "kernel ids");
    (gemm ? gemm_ids : kernel_ids).insert(id);
    work.push_back({stream_id, start, end, id});
  }
  SELFTEST_CHECK(kernel_ids == launches, "kernel records carry the runtime launches' correlation ids");
  SELFTEST_CHECK(gemm_ids == library, "library kernels carry their driver calls' correlation ids");
  std::set<uint32_t> copy_ids, memset_ids, memset_streams;
  for (const CUpti_ActivityMemcpy6& copy : records.memcpys) {
    const uint64_t start = copy.start, end = copy.end, bytes = copy.bytes;
    SELFTEST_CHECK(bytes == sizeof(host) && end - start == 3000 + sizeof(host) / 100, "memcpy bytes, duration");
    SELFTEST_CHECK(copy.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && copy.streamId == 0, "memcpy kind, stream");
    SELFTEST_CHECK(copy.correlationId == copy.runtimeCorrelationId, "memcpy runtime correlation");
    copy_ids.insert(copy.correlationId);
    work.push_back({copy.streamId, start, end, copy.correlationId});
  }
  for (const CUpti_ActivityMemset4& memset : records.memsets) {
    const uint64_t start = memset.start, end = memset.end, bytes = memset.bytes;
    SELFTEST_CHECK(bytes == 4096 && memset.value == 7 && end - start == 4000, "memset fields");
    memset_ids.insert(memset.correlationId);
    memset_streams.insert(memset.streamId);
    work.push_back({memset.streamId, start, end, memset.correlationId});
  }
  SELFTEST_CHECK(copy_ids == copies && memset_ids == memsets, "copy and memset records match their calls");
  SELFTEST_CHECK(memset_streams.size() == 1 && *memset_streams.begin() != 0, "a stream's records share its id");
  CheckTimeline(work, calls);

  // 1 KiB buffers hold 4 kernel records: ~20 KiB of records make many
  // completions, and nothing is lost.
  SELFTEST_CHECK(records.completions >= 20, "%d completions", records.completions);
  size_t dropped = 1;
  SELFTEST_CHECK(g_cupti.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped == 0,
                 "%zu dropped", dropped);
  // One overhead record per completion, all but the last flush's delivered
  // (it waits for the next buffer).
  SELFTEST_CHECK(static_cast<int>(records.overheads.size()) >= records.completions - 2 &&
                     static_cast<int>(records.overheads.size()) <= records.completions,
                 "%zu overhead records for %d completions", records.overheads.size(), records.completions);
  for (const CUpti_ActivityOverhead3& overhead : records.overheads) {
    const uint64_t start = overhead.start, end = overhead.end;
    SELFTEST_CHECK(overhead.overheadKind == CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH &&
                       overhead.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD &&
                       overhead.objectId.pt.threadId == static_cast<uint32_t>(gettid()) &&
                       overhead.objectId.pt.processId == static_cast<uint32_t>(getpid()),
                   "overhead record fields");
    SELFTEST_CHECK(start >= kClockOffset && end >= start, "overhead on the registered clock");
  }
}

// Threads launching at once on their own streams: callbacks pair per
// thread, correlation ids stay unique, no record is lost.
void CheckThreads() {
  constexpr int kThreads = 4, kLaunches = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      const std::string operation = "thread_" + std::to_string(t);
      rlscope_fake_set_operation(operation.c_str());
      for (int i = 0; i < kLaunches; ++i) LaunchKernel(StreamAt(0x1000 * (t + 1)));
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<Event> events = TakeEvents();
  const Records records = TakeRecords();
  const std::map<uint32_t, Call> calls = PairCalls(events);
  const auto launches =
      IdsOf(calls, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, false);
  SELFTEST_CHECK(launches.size() == kThreads * kLaunches, "%zu threaded launches", launches.size());
  std::set<uint32_t> ids;
  std::vector<Work> work;
  for (const CUpti_ActivityKernel10& kernel : records.kernels) {
    ids.insert(kernel.correlationId);
    work.push_back({kernel.streamId, kernel.start, kernel.end, kernel.correlationId});
  }
  SELFTEST_CHECK(ids == launches && records.kernels.size() == launches.size(), "%zu threaded kernel records",
                 records.kernels.size());
  CheckTimeline(work, calls);
}

void CheckDrops() {
  g_buffer_mode = BufferMode::kNull;
  for (int i = 0; i < 5; ++i) LaunchKernel(nullptr);
  size_t dropped = 0;
  SELFTEST_CHECK(g_cupti.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped == 5,
                 "NULL buffer: %zu dropped", dropped);
  SELFTEST_CHECK(g_cupti.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped == 0,
                 "the count resets when read (%zu)", dropped);
  g_buffer_mode = BufferMode::kTooSmall;
  LaunchKernel(nullptr);
  SELFTEST_CHECK(g_cupti.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped == 1,
                 "too small a buffer: %zu dropped", dropped);
  g_buffer_mode = BufferMode::kNormal;
  LaunchKernel(nullptr);
  TakeEvents();
  const Records records = TakeRecords();
  SELFTEST_CHECK(records.kernels.size() == 1, "after drops, records flow again (%zu)", records.kernels.size());
  SELFTEST_CHECK(records.empty_completions == 1, "the too small buffer was given back (%d)", records.empty_completions);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool HasLine(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

// A fork() child's ledger: only its own calls and GPU records, per
// operation and thread.
void CheckLedgerInForkChild(const std::string& directory) {
  const pid_t child = fork();
  SELFTEST_CHECK(child >= 0, "fork");
  if (child == 0) {
    setenv("RLSCOPE_FAKE_CUDART_LOG", (directory + "/ledger").c_str(), 1);
    rlscope_fake_set_operation("ledger_op");
    static char host[1000];
    LaunchKernel(nullptr);
    LaunchKernel(nullptr);
    rlscope_fake_library_gemm(1);
    cudaMemcpy(host, host, sizeof(host), cudaMemcpyHostToDevice);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([t] {
        const std::string operation = "ledger_thread_" + std::to_string(t);
        rlscope_fake_set_operation(operation.c_str());
        for (int i = 0; i < 10; ++i) LaunchKernel(nullptr);
      });
    }
    for (std::thread& thread : threads) thread.join();
    g_cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    exit(0);  // exit(): the ledger is written by a destructor.
  }
  int status = 0;
  waitpid(child, &status, 0);
  SELFTEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ledger child failed");
  const std::string ledger = ReadFile(directory + "/ledger." + std::to_string(child));
  SELFTEST_CHECK(!ledger.empty(), "no ledger from the child");
  const std::string gpu = R"({"operation": "ledger_op", "kind": )";
  SELFTEST_CHECK(HasLine(ledger, gpu + R"("kernel", "name": "fake_kernel", "count": 2, "ns": 12000})"), "%s",
                 ledger.c_str());
  SELFTEST_CHECK(HasLine(ledger, gpu + R"("kernel", "name": "fake_gemm_kernel", "count": 1, "ns": 7000})"), "%s",
                 ledger.c_str());
  SELFTEST_CHECK(HasLine(ledger, gpu + R"("memcpy", "name": "HtoD", "count": 1, "ns": 3010})"), "%s", ledger.c_str());
  for (int t = 0; t < 2; ++t) {
    SELFTEST_CHECK(HasLine(ledger, R"({"operation": "ledger_thread_)" + std::to_string(t) +
                                       R"(", "kind": "kernel", "name": "fake_kernel", "count": 10, "ns": 60000})"),
                   "%s", ledger.c_str());
  }
  // One stream, serialized with gaps: the union is the sum.
  SELFTEST_CHECK(HasLine(ledger, R"("gpu_busy_ns": 142010, "gpu_records_dropped": 0, "preempted": {)"), "%s",
                 ledger.c_str());
  SELFTEST_CHECK(HasLine(ledger, R"({"operation": "ledger_op", "function": "cuLaunchKernel", "ns": )") &&
                     HasLine(ledger, R"({"operation": "ledger_op", "function": "cudaLaunchKernel", "ns": )"),
                 "%s", ledger.c_str());
  SELFTEST_CHECK(!HasLine(ledger, "op_a") && !HasLine(ledger, "\"thread_0\""), "the parent's work left out: %s",
                 ledger.c_str());
  unlink((directory + "/ledger." + std::to_string(child)).c_str());
}

// Runs `body` in a fork() child with stderr in a file; returns the exit
// status and, in `stderr_text`, what it printed.
template <typename Body>
int InChild(const std::string& directory, std::string* stderr_text, Body body) {
  const std::string path = directory + "/stderr";
  const pid_t child = fork();
  SELFTEST_CHECK(child >= 0, "fork");
  if (child == 0) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    body();
    fflush(stderr);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  *stderr_text = ReadFile(path);
  unlink(path.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

using InjectionState = void (*)(int*, int*, int*, uint64_t*);

// CUDA_INJECTION64_PATH, in children whose first runtime call it is (the
// parent must not have made one yet).
void CheckInjection(const std::string& directory) {
  std::string text;
  int status = InChild(directory, &text, [] {
    setenv("CUDA_INJECTION64_PATH", "/nonexistent/libinjection.so", 1);
    SELFTEST_CHECK(cudaDeviceSynchronize() == cudaSuccess, "call with a missing injection");
  });
  SELFTEST_CHECK(status == 0 && HasLine(text, "cannot load CUDA_INJECTION64_PATH"), "missing file: %s", text.c_str());
  status = InChild(directory, &text, [] {
    setenv("CUDA_INJECTION64_PATH", g_cupti_path, 1);  // A library without InitializeInjection.
    SELFTEST_CHECK(cudaDeviceSynchronize() == cudaSuccess, "call with an injection lacking its symbol");
  });
  SELFTEST_CHECK(status == 0 && HasLine(text, "has no InitializeInjection"), "missing symbol: %s", text.c_str());

  status = InChild(directory, &text, [] {
    setenv("CUDA_INJECTION64_PATH", g_injection_path, 1);
    setenv("RLSCOPE_CUPTI_PATH", g_cupti_path, 1);
    const uint64_t before = ClockNs(CLOCK_REALTIME);
    // The first calls race: injection runs once, before any of them.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([] { LaunchKernel(nullptr); });
    for (std::thread& thread : threads) thread.join();
    void* injection = dlopen(g_injection_path, RTLD_NOW | RTLD_NOLOAD);
    SELFTEST_CHECK(injection != nullptr, "the injection library was not loaded");
    auto state = reinterpret_cast<InjectionState>(dlsym(injection, "rlscope_selftest_injection_state"));
    int injections = 0, callbacks = 0, kernels = 0;
    uint64_t first_start = 0;
    state(&injections, &callbacks, &kernels, &first_start);
    SELFTEST_CHECK(injections == 1, "InitializeInjection ran %d times", injections);
    SELFTEST_CHECK(callbacks == 8, "the injected subscriber saw %d callbacks of 4 launches", callbacks);
    SELFTEST_CHECK(kernels == 4, "%d kernel records", kernels);
    // No timestamp callback registered: CUPTI's CLOCK_REALTIME.
    SELFTEST_CHECK(first_start > before && first_start < ClockNs(CLOCK_REALTIME) + 1000000000,
                   "default clock is CLOCK_REALTIME (%llu)", static_cast<unsigned long long>(first_start));
    // A fork() child inherits the injection and does not run it again.
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      LaunchKernel(nullptr);
      state(&injections, &callbacks, &kernels, &first_start);
      _exit(injections == 1 && callbacks == 10 ? 0 : 1);
    }
    int grandchild_status = 0;
    waitpid(grandchild, &grandchild_status, 0);
    SELFTEST_CHECK(WIFEXITED(grandchild_status) && WEXITSTATUS(grandchild_status) == 0,
                   "injection re-ran in a fork child");
  });
  SELFTEST_CHECK(status == 0, "injection: %s", text.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fake_cupti_selftest LIBCUPTI_SO INJECTION_SO\n");
    return 2;
  }
  g_cupti_path = argv[1];
  g_injection_path = argv[2];
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("RLSCOPE_FAKE_CUPTI_FAIL");
  unsetenv("RLSCOPE_FAKE_CUDART_LOG");
  char directory_template[] = "/tmp/fake_cupti_selftest.XXXXXX";
  SELFTEST_CHECK(mkdtemp(directory_template) != nullptr, "mkdtemp");
  g_scratch = directory_template;
  g_scratch_owner = getpid();
  const std::string directory = g_scratch;

  CheckInjection(directory);

  g_cupti = LoadCupti(g_cupti_path);
  CheckFailureKnobs();
  CheckNames();
  CheckGetNextRecord();

  uint64_t timestamp = 0;
  SELFTEST_CHECK(g_cupti.GetTimestamp(&timestamp) == CUPTI_SUCCESS &&
                     timestamp + 1000000000 > ClockNs(CLOCK_REALTIME) && timestamp <= ClockNs(CLOCK_REALTIME),
                 "cuptiGetTimestamp is CLOCK_REALTIME by default");
  SELFTEST_CHECK(g_cupti.ActivityRegisterTimestampCallback(TestClock) == CUPTI_SUCCESS, "timestamp callback");
  SELFTEST_CHECK(g_cupti.GetTimestamp(&timestamp) == CUPTI_SUCCESS && timestamp >= kClockOffset,
                 "cuptiGetTimestamp follows the timestamp callback");
  SELFTEST_CHECK(g_cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS, "thread id type");
  SELFTEST_CHECK(g_cupti.ActivityFlushAll(0) == CUPTI_ERROR_INVALID_OPERATION, "flush before callbacks");
  SELFTEST_CHECK(g_cupti.ActivityRegisterCallbacks(RequestBuffer, BufferCompleted) == CUPTI_SUCCESS, "callbacks");
  SELFTEST_CHECK(g_cupti.ActivityFlushPeriod(10) == CUPTI_SUCCESS, "flush period");
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
    SELFTEST_CHECK(g_cupti.ActivityEnable(kind) == CUPTI_SUCCESS, "enable kind %d", static_cast<int>(kind));
  }
  SELFTEST_CHECK(g_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING) == CUPTI_ERROR_NOT_COMPATIBLE,
                 "an unemulated kind is refused");

  SELFTEST_CHECK(g_cupti.Subscribe(&g_subscriber, ApiCallback, &g_events) == CUPTI_SUCCESS, "subscribe");
  CUpti_SubscriberHandle second;
  SELFTEST_CHECK(g_cupti.Subscribe(&second, ApiCallback, nullptr) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                 "a second subscriber");
  const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> enabled[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
  };
  for (const auto& [domain, cbid] : enabled) {
    SELFTEST_CHECK(g_cupti.EnableCallback(1, g_subscriber, domain, cbid) == CUPTI_SUCCESS, "enable %u", cbid);
  }
  SELFTEST_CHECK(
      g_cupti.EnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, 0) == CUPTI_ERROR_INVALID_PARAMETER,
      "enable an invalid cbid");

  CheckSingleThread();
  CheckThreads();
  CheckDrops();
  CheckLedgerInForkChild(directory);

  // Unsubscribed: no more callbacks; a new subscriber is welcome.
  SELFTEST_CHECK(g_cupti.Unsubscribe(g_subscriber) == CUPTI_SUCCESS, "unsubscribe");
  LaunchKernel(nullptr);
  SELFTEST_CHECK(TakeEvents().empty(), "callbacks after cuptiUnsubscribe");
  SELFTEST_CHECK(
      g_cupti.EnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                             CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == CUPTI_ERROR_INVALID_PARAMETER,
      "a stale subscriber handle");
  SELFTEST_CHECK(g_cupti.Subscribe(&g_subscriber, ApiCallback, &g_events) == CUPTI_SUCCESS, "subscribe again");
  SELFTEST_CHECK(g_cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS, "disable");
  TakeRecords();
  LaunchKernel(nullptr);
  SELFTEST_CHECK(TakeRecords().kernels.empty(), "kernel records after cuptiActivityDisable");
  SELFTEST_CHECK(g_cupti.Finalize() == CUPTI_SUCCESS, "finalize");

  RemoveScratch();
  printf("fake_cupti_selftest: all checks passed\n");
  return 0;
}

#endif  // RLSCOPE_SELFTEST_INJECTION
