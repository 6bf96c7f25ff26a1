// A fake libcudart.so.13 for GPU-less tests. Every entry point rlscope
// interposes (preload/cuda_runtime_api_list.h) busy-waits a fixed duration,
// distinct per function family, and accounts the exact time it spent inside
// itself per (operation, function): the ground truth the end-to-end tests
// compare rlscope's report with.
//
// It also plays NVIDIA's driver for the fake CUPTI (fake_cupti.cc):
//   - injection: the first fake runtime call loads CUDA_INJECTION64_PATH
//     and calls its InitializeInjection() once, as libcuda's cuInit does
//     (a fork() child inherits that it ran);
//   - API callbacks: once the fake CUPTI attached (fake_cupti_bridge.h:
//     its constructor calls rlscope_fake_cudart_attach_cupti), each call
//     delivers ENTER before and EXIT after its busy window, with the real
//     CUpti_CallbackData (functionParams: the real <name>_params struct of
//     generated_cuda_runtime_api_meta.h); launches, copies, memsets and
//     waits make a nested driver call (cuLaunchKernel and kin) inside that
//     window, whose id their GPU records carry;
//   - GPU activity: launches, copies and memsets put work on a virtual GPU
//     timeline (no waiting) and, where the kind is enabled, emit the real
//     CUPTI records through the fake CUPTI's buffers;
//   - rlscope_fake_library_gemm(): a library (cuBLAS, XLA) calling the
//     driver directly, no runtime call around it.
// It is also rlscope calibrate's runtime on machines without a GPU (see the
// end of this file), and is installed for that.
//
// Knobs (environment):
//   RLSCOPE_FAKE_CUDART_LOG    write the accounting as JSON to <value>.<pid>
//                              at exit
//   RLSCOPE_FAKE_CUDART_SCALE  multiply every busy duration (0: return at
//                              once without accounting: a bare call, for
//                              measuring interception cost; callbacks and
//                              records still happen). GPU durations are
//                              virtual and never scaled.
//   CUDA_INJECTION64_PATH      the profiler to inject (see above)
// The program tells the fake which operation it is in through
// rlscope_fake_set_operation() (the fake cannot see NVTX).
//
// The ledger (JSON):
//   {"pid": P,
//    "calls": [{"operation", "function", "ns", "calls"}...],   CPU time
//    "gpu": [{"operation", "kind", "name", "count", "ns"}...],  GPU records
//    "gpu_busy_ns": N, "gpu_records_dropped": D}
// "injection": {"operation", "loader_ns"}: the loader's time injecting the
// profiler (Injection below), in the operation of the first call.
// "preempted": {operation: ns}, how long the threads waited for a CPU while
// in each operation (OperationRunDelay below): the most a preemption can
// have moved rlscope's view of that operation's calls away from this
// ledger (exit() ends the calling thread's count before the ledger is
// written; threads still running then are not counted).
// "calls" ns: the busy window of each call (after the ENTER callback
// returned, before EXIT is called: the profiler's own callbacks are not
// the fake's time; nor are a nested driver call's callbacks, which run
// inside its runtime call and lengthen it, as with NVIDIA's). "gpu": per (operation current on the
// launching thread, "kernel"|"memcpy"|"memset", kernel name or copy
// direction or "memset"), the records stored in a CUPTI buffer, with the
// sum of end - start; "gpu_busy_ns": the length of the union of those
// records' intervals; "gpu_records_dropped": records the fake CUPTI had no
// buffer for (in neither of the above).
#include <cupti.h>  // Also the <name>_params structs (generated_cuda*_meta.h).
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "calibration/fake_cuda/fake_cupti_bridge.h"
#include "preload/cuda_runtime_api_list.h"
#include "test/support/run_delay.h"

#define RLSCOPE_FAKE_EXPORT __attribute__((visibility("default")))

namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

double Scale() {
  static const double scale = [] {
    const char* text = getenv("RLSCOPE_FAKE_CUDART_SCALE");
    return text != nullptr ? atof(text) : 1.0;
  }();
  return scale;
}

constexpr bool Contains(std::string_view text, std::string_view part) { return text.find(part) != text.npos; }

// Nominal busy time per family, in nanoseconds: different on purpose, so a
// report that mixes them up cannot pass.
constexpr int64_t NominalNs(std::string_view function) {
  if (Contains(function, "Launch")) return 20000;
  if (Contains(function, "Memcpy")) return 50000;
  if (Contains(function, "Memset")) return 15000;
  if (Contains(function, "Synchronize")) return 40000;
  if (Contains(function, "Free")) return 25000;
  return 30000;  // Allocations.
}

// A library's direct driver launch (rlscope_fake_library_gemm): its busy
// time and its kernel's.
constexpr int64_t kLibraryLaunchNs = 12000;
constexpr uint64_t kLibraryKernelNs = 7000;
// The virtual GPU: work starts this long after its API call returned (or
// its stream's previous work ended), and lasts this long.
//
// The fake's waits (synchronize, copy, free) spin their nominal time and
// never wait for this GPU, so the GPU must never bound a fake program: a
// queue of work that a real wait would have waited out, but the ledger
// says was not, would make the ledger wrong for a GPU-bound program (the
// correction gives such waits back the time the GPU hid). So every piece
// of work ends before the quickest call that queues more can return
// (kGpuLatencyNs + the work < kLibraryLaunchNs, the shortest), copies up
// to 500 KB included: one thread's calls never queue on the GPU. GPU-bound
// programs are checked on a real GPU (scripts/device/probe_cupti_parts.sh).
constexpr uint64_t kGpuLatencyNs = 2000;
constexpr uint64_t kKernelNs = 6000;
constexpr uint64_t kMemsetNs = 4000;
constexpr uint64_t MemcpyNs(uint64_t bytes) { return 3000 + bytes / 100; }
static_assert(kGpuLatencyNs + std::max({kKernelNs, kLibraryKernelNs, kMemsetNs, MemcpyNs(500000)}) + 1000 <
                  static_cast<uint64_t>(kLibraryLaunchNs),
              "the fake's GPU work must end before the next call can queue more");

// The one fake device and context.
constexpr uint32_t kDeviceId = 0;
constexpr uint32_t kContextId = 1;
int g_context_storage;
CUcontext FakeContext() { return reinterpret_cast<CUcontext>(&g_context_storage); }

// ---- Injection (libcuda's cuInit) ----

thread_local bool t_injecting = false;
std::atomic<bool> g_injected{false};  // The fast path: every call checks.

// The operation the calling thread is in (rlscope_fake_set_operation).
thread_local std::string t_operation = "(none)";

// The ledger's "injection": the loader's part of injecting the profiler
// (dlopen and dlsym of CUDA_INJECTION64_PATH), which the first call does
// for the profiler alone, inside no ledger window, and which the profiler
// cannot time (its own InitializeInjection, which it times, is not in it).
struct Injection {
  std::string operation;
  int64_t loader_ns = 0;
};
Injection g_injection;

void EnsureInjected() {
  static std::once_flag once;
  if (g_injected.load(std::memory_order_acquire)) return;
  if (t_injecting) return;  // The profiler's InitializeInjection calling the runtime.
  std::call_once(once, [] {
    const char* path = getenv("CUDA_INJECTION64_PATH");
    if (path == nullptr || *path == '\0') return;
    t_injecting = true;
    const int64_t begin_ns = NowNs();
    if (void* handle = dlopen(path, RTLD_NOW)) {
      if (auto initialize = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"))) {
        g_injection = {t_operation, NowNs() - begin_ns};
        initialize();
      } else {
        fprintf(stderr, "fake libcudart: %s has no InitializeInjection; not injected\n", path);
      }
    } else {
      fprintf(stderr, "fake libcudart: cannot load CUDA_INJECTION64_PATH: %s\n", dlerror());
    }
    t_injecting = false;
  });
  g_injected.store(true, std::memory_order_release);
}

// ---- The fake CUPTI, once attached ----

std::atomic<const RlscopeFakeCuptiBridge*> g_cupti{nullptr};
// Shared by runtime and driver calls, as in CUPTI; 0 means none.
std::atomic<uint32_t> g_next_correlation_id{1};

// ---- Accounting (the ground truth) ----

struct GpuTotal {
  int64_t ns = 0;
  int64_t count = 0;
};

struct Accounting {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> ns_and_calls;
  std::map<std::tuple<std::string, std::string, std::string>, GpuTotal> gpu;  // (operation, kind, name)
  std::map<uint64_t, uint64_t> gpu_busy;                                      // Disjoint intervals, start -> end.
  int64_t gpu_records_dropped = 0;
  std::map<std::string, int64_t> preempted;  // Operation -> run delay (ns).
};
Accounting& Ledger() {
  static Accounting* ledger = new Accounting();  // Never destroyed: used from exit paths.
  return *ledger;
}

// The ledger's "preempted": per operation, how long the threads waited
// for a CPU while in it (test/support/run_delay.h). A thread reads its run
// delay when its operation changes (rlscope_fake_set_operation: never
// inside a call, so no call is made longer) and at its exit, and adds each
// difference to the operation it was in.
// Only when a ledger is written (RLSCOPE_FAKE_CUDART_LOG).
bool LedgerWanted() {
  static const bool wanted = [] {
    const char* path = getenv("RLSCOPE_FAKE_CUDART_LOG");
    return path != nullptr && *path != '\0';
  }();
  return wanted;
}

class OperationRunDelay {
 public:
  // Switch: the thread leaves its operation for `next` (the same: only
  // brings the count up to date).
  void Switch(const std::string& next) {
    if (!LedgerWanted()) return;
    const long long now = RlscopeTestRunDelayNs();
    if (since_ns_ >= 0 && now > since_ns_) {
      Accounting& ledger = Ledger();
      std::lock_guard<std::mutex> lock(ledger.mutex);
      ledger.preempted[operation_] += now - since_ns_;
    }
    operation_ = next;
    since_ns_ = now;
  }
  // Restart: a fork() child's thread has a run delay of its own, from 0.
  void Restart() { since_ns_ = -1; }
  ~OperationRunDelay() {
    Switch(operation_);
    since_ns_ = -1;  // The ledger, written later at exit, must not count it again.
  }

 private:
  std::string operation_ = "(none)";
  long long since_ns_ = -1;
};
thread_local OperationRunDelay t_run_delay;

// The main thread counts from the library's load (other threads from their
// first rlscope_fake_set_operation): never from inside a call, where the
// first read of schedstat (tens of microseconds) would lengthen the call.
__attribute__((constructor)) void StartMainThreadRunDelay() { t_run_delay.Switch(t_operation); }

void AccountCall(const char* function, int64_t ns) {
  Accounting& ledger = Ledger();
  std::lock_guard<std::mutex> lock(ledger.mutex);
  auto& entry = ledger.ns_and_calls[{t_operation, function}];
  entry.first += ns;
  entry.second += 1;
}

// Adds [start, end) to a set of disjoint intervals, merging what it touches.
void AddInterval(std::map<uint64_t, uint64_t>& intervals, uint64_t start, uint64_t end) {
  auto it = intervals.upper_bound(start);
  if (it != intervals.begin() && std::prev(it)->second >= start) {
    --it;
    start = it->first;
    end = std::max(end, it->second);
    it = intervals.erase(it);
  }
  while (it != intervals.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = intervals.erase(it);
  }
  intervals.emplace(start, end);
}

void AccountGpu(bool stored, const char* kind, const char* name, uint64_t start, uint64_t end) {
  Accounting& ledger = Ledger();
  std::lock_guard<std::mutex> lock(ledger.mutex);
  if (!stored) {
    ++ledger.gpu_records_dropped;
    return;
  }
  GpuTotal& total = ledger.gpu[{t_operation, kind, name}];
  total.ns += static_cast<int64_t>(end - start);
  total.count += 1;
  AddInterval(ledger.gpu_busy, start, end);
}

__attribute__((destructor)) void WriteLedger() {
  const char* path = getenv("RLSCOPE_FAKE_CUDART_LOG");
  if (path == nullptr || *path == '\0') return;
  const std::string file = std::string(path) + "." + std::to_string(getpid());
  FILE* out = fopen(file.c_str(), "w");
  if (out == nullptr) return;
  Accounting& ledger = Ledger();
  std::lock_guard<std::mutex> lock(ledger.mutex);
  fprintf(out, "{\"pid\": %d, \"calls\": [", getpid());
  bool first = true;
  for (const auto& [key, value] : ledger.ns_and_calls) {
    fprintf(out, "%s\n {\"operation\": \"%s\", \"function\": \"%s\", \"ns\": %lld, \"calls\": %lld}", first ? "" : ",",
            key.first.c_str(), key.second.c_str(), static_cast<long long>(value.first),
            static_cast<long long>(value.second));
    first = false;
  }
  fprintf(out, "\n], \"gpu\": [");
  first = true;
  uint64_t busy_ns = 0;
  for (const auto& [key, total] : ledger.gpu) {
    const auto& [operation, kind, name] = key;
    fprintf(out, "%s\n {\"operation\": \"%s\", \"kind\": \"%s\", \"name\": \"%s\", \"count\": %lld, \"ns\": %lld}",
            first ? "" : ",", operation.c_str(), kind.c_str(), name.c_str(), static_cast<long long>(total.count),
            static_cast<long long>(total.ns));
    first = false;
  }
  for (const auto& [start, end] : ledger.gpu_busy) busy_ns += end - start;
  fprintf(out, "\n], \"gpu_busy_ns\": %llu, \"gpu_records_dropped\": %lld, \"preempted\": {",
          static_cast<unsigned long long>(busy_ns), static_cast<long long>(ledger.gpu_records_dropped));
  first = true;
  for (const auto& [operation, ns] : ledger.preempted) {
    fprintf(out, "%s\"%s\": %lld", first ? "" : ", ", operation.c_str(), static_cast<long long>(ns));
    first = false;
  }
  fprintf(out, "}, \"injection\": {\"operation\": \"%s\", \"loader_ns\": %lld}}\n", g_injection.operation.c_str(),
          static_cast<long long>(g_injection.loader_ns));
  fclose(out);
}

// ---- API calls ----

// One API call as the driver runs it: the subscriber's ENTER callback, the
// call's own busy window, the EXIT callback. With scale 0 there is no
// window (no clock, no accounting), only the callbacks. A driver call
// nested in a runtime call (`outer`) delivers its callbacks inside the
// outer call's window; their time is added to that window, not taken
// from it, as CUPTI's callbacks add to a real call's time.
class ApiCall {
 public:
  ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* function, const void* params,
          void* return_value, ApiCall* outer = nullptr)
      : cupti_(g_cupti.load(std::memory_order_acquire)),
        domain_(domain),
        cbid_(cbid),
        accounting_(Scale() > 0),
        outer_(outer) {
    if (cupti_ != nullptr) {
      data_.functionName = function;
      data_.functionParams = params;
      data_.functionReturnValue = return_value;
      data_.symbolName = nullptr;
      data_.context = FakeContext();
      data_.contextUid = kContextId;
      data_.correlationData = &correlation_data_;
      data_.correlationId = g_next_correlation_id.fetch_add(1, std::memory_order_relaxed);
      Callback(CUPTI_API_ENTER);
    }
    if (accounting_) begin_ns_ = NowNs();
  }
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;

  // Busy until `nominal_ns` (scaled) of the window passed, the nested
  // calls' callbacks not counted.
  void SpinUntil(int64_t nominal_ns) const {
    if (!accounting_) return;
    const auto until_ns = static_cast<int64_t>(static_cast<double>(nominal_ns) * Scale());
    while (NowNs() - begin_ns_ - callbacks_inside_ns_ < until_ns) {
    }
  }

  // Ends the window (accounted under `ledger_function` unless null) and
  // delivers EXIT.
  void Exit(const char* ledger_function) {
    if (accounting_ && ledger_function != nullptr) {
      AccountCall(ledger_function, NowNs() - begin_ns_ - callbacks_inside_ns_);
    }
    if (cupti_ == nullptr) return;
    exit_timestamp_ = cupti_->timestamp();
    Callback(CUPTI_API_EXIT);
  }

  const RlscopeFakeCuptiBridge* cupti() const { return cupti_; }
  uint32_t correlation_id() const { return data_.correlationId; }
  // The id the call's GPU records carry: its own, or its nested driver
  // call's where set (set_gpu_correlation_id: while the runtime's callback
  // for it is off, as NVIDIA's CUPTI gives them).
  uint32_t gpu_correlation_id() const { return gpu_correlation_id_ != 0 ? gpu_correlation_id_ : correlation_id(); }
  void set_gpu_correlation_id(uint32_t id) { gpu_correlation_id_ = id; }
  uint64_t exit_timestamp() const { return exit_timestamp_; }

 private:
  void Callback(CUpti_ApiCallbackSite site) {
    data_.callbackSite = site;
    if (outer_ == nullptr || !outer_->accounting_) {
      cupti_->api_callback(domain_, cbid_, &data_);
      return;
    }
    const int64_t begin = NowNs();
    cupti_->api_callback(domain_, cbid_, &data_);
    outer_->callbacks_inside_ns_ += NowNs() - begin;
  }

  const RlscopeFakeCuptiBridge* const cupti_;
  const CUpti_CallbackDomain domain_;
  const CUpti_CallbackId cbid_;
  const bool accounting_;
  ApiCall* const outer_;
  int64_t callbacks_inside_ns_ = 0;  // Nested calls' callbacks, in this window.
  uint32_t gpu_correlation_id_ = 0;
  CUpti_CallbackData data_{};
  uint64_t correlation_data_ = 0;
  int64_t begin_ns_ = 0;
  uint64_t exit_timestamp_ = 0;
};

// ---- The virtual GPU ----

struct Gpu {
  std::mutex mutex;
  std::map<uintptr_t, uint32_t> stream_ids;
  std::map<uint32_t, uint64_t> stream_end;
  int64_t next_grid_id = 1;
};
Gpu& Device() {
  static Gpu* gpu = new Gpu();  // Never destroyed: used from exit paths.
  return *gpu;
}

// 0 for the default stream, else a small number per stream pointer.
uint32_t StreamIdLocked(Gpu& gpu, const void* stream) {
  const auto key = reinterpret_cast<uintptr_t>(stream);
  if (stream == nullptr || stream == cudaStreamLegacy) return 0;
  return gpu.stream_ids.try_emplace(key, static_cast<uint32_t>(gpu.stream_ids.size() + 1)).first->second;
}

struct Slot {
  uint32_t stream_id;
  uint64_t start;
  uint64_t end;
  int64_t grid_id;
};

// Work of `duration_ns` starts after its API call returned and after its
// stream's previous work ended.
Slot Schedule(const ApiCall& call, const void* stream, uint64_t duration_ns) {
  Gpu& gpu = Device();
  std::lock_guard<std::mutex> lock(gpu.mutex);
  Slot slot;
  slot.stream_id = StreamIdLocked(gpu, stream);
  uint64_t& stream_end = gpu.stream_end[slot.stream_id];
  slot.start = std::max(call.exit_timestamp(), stream_end) + kGpuLatencyNs;
  slot.end = slot.start + duration_ns;
  slot.grid_id = gpu.next_grid_id++;
  stream_end = slot.end;
  return slot;
}

// A fork() child starts with an empty ledger: the calls before the fork
// were the parent's. It keeps the GPU timeline. The locks are held across
// fork() so the child's copies are consistent.
__attribute__((constructor)) void ClearLedgerInForkChildren() {
  pthread_atfork(
      [] {
        Device().mutex.lock();
        Ledger().mutex.lock();
      },
      [] {
        Ledger().mutex.unlock();
        Device().mutex.unlock();
      },
      [] {
        Accounting& ledger = Ledger();
        ledger.ns_and_calls.clear();
        ledger.gpu.clear();
        ledger.gpu_busy.clear();
        ledger.gpu_records_dropped = 0;
        ledger.preempted.clear();
        g_injection = {};  // The parent's first call paid it.
        t_run_delay.Restart();
        ledger.mutex.unlock();
        Device().mutex.unlock();
      });
}

// Hands a record to the fake CUPTI (never under a lock: a full buffer is
// completed in this thread, in the profiler's code) and accounts it.
template <typename Record>
void Deliver(const ApiCall& call, const Record& record, const char* kind, const char* name) {
  const bool stored = call.cupti()->emit_record(reinterpret_cast<const CUpti_Activity*>(&record), sizeof(record)) != 0;
  if (Scale() > 0) AccountGpu(stored, kind, name, record.start, record.end);
}

struct LaunchShape {
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  size_t shared_bytes = 0;
  cudaStream_t stream = nullptr;
  void** args = nullptr;
  const void* graph = nullptr;
};

void EmitKernel(const ApiCall& call, const LaunchShape& shape, const char* name, uint64_t duration_ns,
                uint8_t launch_type) {
  if (call.cupti() == nullptr) return;
  const Slot slot = Schedule(call, shape.stream, duration_ns);
  if (!call.cupti()->activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return;
  CUpti_ActivityKernel10 record{};
  record.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  record.registersPerThread = 32;
  record.start = slot.start;
  record.end = slot.end;
  record.completed = slot.end;
  record.deviceId = kDeviceId;
  record.contextId = kContextId;
  record.streamId = slot.stream_id;
  record.gridX = static_cast<int32_t>(shape.grid.x);
  record.gridY = static_cast<int32_t>(shape.grid.y);
  record.gridZ = static_cast<int32_t>(shape.grid.z);
  record.blockX = static_cast<int32_t>(shape.block.x);
  record.blockY = static_cast<int32_t>(shape.block.y);
  record.blockZ = static_cast<int32_t>(shape.block.z);
  record.dynamicSharedMemory = static_cast<int32_t>(shape.shared_bytes);
  record.correlationId = call.gpu_correlation_id();
  record.gridId = slot.grid_id;
  record.name = name;  // A string literal: lives forever, as CUPTI's names do.
  record.launchType = launch_type;
  Deliver(call, record, "kernel", name);
}

struct CopyKind {
  CUpti_ActivityMemcpyKind kind;
  CUpti_ActivityMemoryKind src;
  CUpti_ActivityMemoryKind dst;
  const char* name;  // The ledger's name for the copy.
};

CopyKind CopyKindOf(cudaMemcpyKind kind, bool peer) {
  constexpr auto kHost = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  constexpr auto kDevice = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  if (peer) return {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, kDevice, kDevice, "PtoP"};
  switch (kind) {
    case cudaMemcpyHostToHost: return {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, kHost, kHost, "HtoH"};
    case cudaMemcpyHostToDevice: return {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, kHost, kDevice, "HtoD"};
    case cudaMemcpyDeviceToHost: return {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, kDevice, kHost, "DtoH"};
    case cudaMemcpyDeviceToDevice: return {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, kDevice, kDevice, "DtoD"};
    default:
      return {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN,
              CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, "unknown"};
  }
}

void EmitMemcpy(const ApiCall& call, cudaStream_t stream, uint64_t bytes, const CopyKind& copy, bool async) {
  if (call.cupti() == nullptr) return;
  const Slot slot = Schedule(call, stream, MemcpyNs(bytes));
  if (!call.cupti()->activity_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
  CUpti_ActivityMemcpy6 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  record.copyKind = static_cast<uint8_t>(copy.kind);
  record.srcKind = static_cast<uint8_t>(copy.src);
  record.dstKind = static_cast<uint8_t>(copy.dst);
  record.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  record.bytes = bytes;
  record.start = slot.start;
  record.end = slot.end;
  record.deviceId = kDeviceId;
  record.contextId = kContextId;
  record.streamId = slot.stream_id;
  record.correlationId = call.gpu_correlation_id();
  // Only while the runtime's calls are traced (0 otherwise, as NVIDIA's).
  record.runtimeCorrelationId = call.gpu_correlation_id() == call.correlation_id() ? call.correlation_id() : 0;
  record.copyCount = 1;
  Deliver(call, record, "memcpy", copy.name);
}

void EmitMemset(const ApiCall& call, cudaStream_t stream, uint64_t bytes, int value, bool async) {
  if (call.cupti() == nullptr) return;
  const Slot slot = Schedule(call, stream, kMemsetNs);
  if (!call.cupti()->activity_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
  CUpti_ActivityMemset4 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  record.value = static_cast<uint32_t>(value);
  record.bytes = bytes;
  record.start = slot.start;
  record.end = slot.end;
  record.deviceId = kDeviceId;
  record.contextId = kContextId;
  record.streamId = slot.stream_id;
  record.correlationId = call.gpu_correlation_id();
  record.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Deliver(call, record, "memset", "memset");
}

// ---- What a runtime call's parameters say, read by field name from the
// real <name>_params structs ----

template <typename Params>
cudaStream_t StreamOf(const Params& params) {
  if constexpr (requires(const Params& p) { p.stream; }) {
    return params.stream;
  } else if constexpr (requires(const Params& p) { p.hStream; }) {
    return params.hStream;
  } else if constexpr (requires(const Params& p) { p.config->stream; }) {
    return params.config != nullptr ? params.config->stream : nullptr;
  } else {
    return nullptr;
  }
}

template <typename Params>
uint64_t BytesOf(const Params& params) {
  if constexpr (requires(const Params& p) { p.count; }) {
    return params.count;
  } else if constexpr (requires(const Params& p) { p.width* p.height; }) {
    return params.width * params.height;
  } else {
    return 64;
  }
}

template <typename Params>
LaunchShape ShapeOf(const Params& params) {
  LaunchShape shape;
  shape.stream = StreamOf(params);
  if constexpr (requires(const Params& p) {
                  p.gridDim;
                  p.blockDim;
                  p.sharedMem;
                  p.args;
                }) {
    shape.grid = params.gridDim;
    shape.block = params.blockDim;
    shape.shared_bytes = params.sharedMem;
    shape.args = params.args;
  } else if constexpr (requires(const Params& p) { p.config->gridDim; }) {
    if (params.config != nullptr) {
      shape.grid = params.config->gridDim;
      shape.block = params.config->blockDim;
      shape.shared_bytes = params.config->dynamicSmemBytes;
    }
    shape.args = params.args;
  } else if constexpr (requires(const Params& p) { p.graphExec; }) {
    shape.graph = params.graphExec;
  }
  return shape;
}

// ---- Nested driver launches ----

int g_function_storage;

template <typename DriverParams>
DriverParams DriverParamsFor(const LaunchShape& shape, const CUlaunchConfig* config) {
  DriverParams params{};
  const auto function = reinterpret_cast<CUfunction>(&g_function_storage);
  if constexpr (requires(DriverParams p) { p.gridDimX; }) {
    params.f = function;
    params.gridDimX = shape.grid.x;
    params.gridDimY = shape.grid.y;
    params.gridDimZ = shape.grid.z;
    params.blockDimX = shape.block.x;
    params.blockDimY = shape.block.y;
    params.blockDimZ = shape.block.z;
    params.sharedMemBytes = static_cast<unsigned>(shape.shared_bytes);
    params.hStream = reinterpret_cast<CUstream>(shape.stream);
    params.kernelParams = shape.args;
  } else if constexpr (requires(DriverParams p) { p.config; }) {
    params.config = config;
    params.f = function;
    params.kernelParams = shape.args;
  } else if constexpr (requires(DriverParams p) { p.hGraphExec; }) {
    params.hGraphExec = reinterpret_cast<CUgraphExec>(const_cast<void*>(shape.graph));
    params.hStream = reinterpret_cast<CUstream>(shape.stream);
  }
  return params;
}

// The driver call a runtime call makes inside its own window (from where
// the runtime call's busy time stands until `until_ns` of it); returns its
// correlation id.
template <typename DriverParams>
uint32_t NestedDriverCall(CUpti_CallbackId cbid, const char* function, const LaunchShape& shape, ApiCall& outer,
                          int64_t until_ns) {
  const CUlaunchConfig config = {shape.grid.x,
                                 shape.grid.y,
                                 shape.grid.z,
                                 shape.block.x,
                                 shape.block.y,
                                 shape.block.z,
                                 static_cast<unsigned>(shape.shared_bytes),
                                 reinterpret_cast<CUstream>(shape.stream),
                                 nullptr,
                                 0};
  const DriverParams params = DriverParamsFor<DriverParams>(shape, &config);
  CUresult result = CUDA_SUCCESS;
  ApiCall call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, function, &params, &result, &outer);
  outer.SpinUntil(until_ns);
  call.Exit(nullptr);  // Part of the runtime call's window, not an entry of its own.
  return call.correlation_id();
}

// The driver call inside runtime call `runtime_cbid`: a launch's, a copy's,
// a memset's or a wait's, cudaFree's wait too (0 for any other call: it
// makes none here).
uint32_t NestedDriverCallOf(CUpti_CallbackId runtime_cbid, std::string_view runtime_function, const LaunchShape& shape,
                            ApiCall& outer, int64_t until_ns) {
#define RLSCOPE_NESTED(driver) \
  return NestedDriverCall<driver##_params>(CUPTI_DRIVER_TRACE_CBID_##driver, #driver, shape, outer, until_ns)
  switch (runtime_cbid) {
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: RLSCOPE_NESTED(cuLaunchKernel);
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: RLSCOPE_NESTED(cuLaunchKernel_ptsz);
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000: RLSCOPE_NESTED(cuLaunchCooperativeKernel);
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      RLSCOPE_NESTED(cuLaunchCooperativeKernel_ptsz);
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: RLSCOPE_NESTED(cuLaunchKernelEx);
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: RLSCOPE_NESTED(cuLaunchKernelEx_ptsz);
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000: RLSCOPE_NESTED(cuGraphLaunch);
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000: RLSCOPE_NESTED(cuGraphLaunch_ptsz);
    default: break;
  }
  // The other families by name, one driver function each (NVIDIA's
  // runtime picks among several; which one does not matter here).
  const bool async = Contains(runtime_function, "Async");
  if (Contains(runtime_function, "Memcpy")) {
    if (async) RLSCOPE_NESTED(cuMemcpyAsync);
    RLSCOPE_NESTED(cuMemcpy);
  }
  if (Contains(runtime_function, "Memset")) {
    if (async) RLSCOPE_NESTED(cuMemsetD8Async);
    RLSCOPE_NESTED(cuMemsetD8_v2);
  }
  if (runtime_function == "cudaStreamSynchronize") RLSCOPE_NESTED(cuStreamSynchronize);
  if (runtime_function == "cudaEventSynchronize") RLSCOPE_NESTED(cuEventSynchronize);
  // cudaFree waits for the device, as NVIDIA's does.
  if (runtime_function == "cudaDeviceSynchronize" || runtime_function == "cudaFree") {
    struct NoParams {};  // cuCtxSynchronize takes none.
    return NestedDriverCall<NoParams>(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", shape, outer,
                                      until_ns);
  }
  return 0;
#undef RLSCOPE_NESTED
}

// ---- A runtime call ----

enum class Work { kNone, kKernel, kMemcpy, kMemset };

// What a runtime function's name says, worked out at compile time (the
// bare calls of the interception benchmark must stay bare).
struct Traits {
  const char* function;
  CUpti_CallbackId cbid;
  int64_t nominal_ns;
  Work work;
  bool async;
  bool peer;
  bool cooperative;
};

constexpr Traits TraitsOf(const char* function, CUpti_CallbackId cbid) {
  const std::string_view name = function;
  Work work = Work::kNone;
  if (Contains(name, "Launch")) {
    work = Work::kKernel;
  } else if (Contains(name, "Memcpy")) {
    work = Work::kMemcpy;
  } else if (Contains(name, "Memset")) {
    work = Work::kMemset;
  }
  return {function,
          cbid,
          NominalNs(name),
          work,
          Contains(name, "Async"),
          Contains(name, "Peer"),
          Contains(name, "Cooperative")};
}

template <typename Params>
void EmitWork(const ApiCall& call, const Traits& traits, const Params& params) {
  switch (traits.work) {
    case Work::kKernel:
      EmitKernel(call, ShapeOf(params), "fake_kernel", kKernelNs,
                 traits.cooperative ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
                                    : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
      return;
    case Work::kMemcpy: {
      cudaMemcpyKind kind = cudaMemcpyDefault;
      if constexpr (requires(const Params& p) { p.kind; }) kind = params.kind;
      EmitMemcpy(call, StreamOf(params), BytesOf(params), CopyKindOf(kind, traits.peer), traits.async);
      return;
    }
    case Work::kMemset: {
      int value = 0;
      if constexpr (requires(const Params& p) { p.value; }) value = params.value;
      EmitMemset(call, StreamOf(params), BytesOf(params), value, traits.async);
      return;
    }
    case Work::kNone: return;
  }
}

// ENTER, the busy window (with the nested driver call, if the call makes
// one, in its middle half, and `body` for what the call returns), EXIT,
// then the GPU work.
template <typename Params, typename Body>
void RunRuntimeCall(const Traits& traits, const Params& params, cudaError_t* result, Body&& body) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, traits.cbid, traits.function, &params, result);
  body();
  if (call.cupti() != nullptr) {
    call.SpinUntil(traits.nominal_ns / 4);
    const uint32_t nested =
        NestedDriverCallOf(traits.cbid, traits.function, ShapeOf(params), call, traits.nominal_ns * 3 / 4);
    if (call.cupti()->api_callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, traits.cbid) == 0) {
      call.set_gpu_correlation_id(nested);
    }
  }
  call.SpinUntil(traits.nominal_ns);
  call.Exit(traits.function);
  if (call.cupti() != nullptr) EmitWork(call, traits, params);
}

std::atomic<uintptr_t> g_next_pointer{0x10000};

void FakeAllocate(void** pointer) {
  if (pointer != nullptr) *pointer = reinterpret_cast<void*>(g_next_pointer.fetch_add(0x1000));
}

}  // namespace

// <generated_cuda_runtime_api_meta.h> has no parameter struct for these
// (an internal entry point; no parameters): the fake's own, same pattern.
namespace rlscope_fake_params {
struct __cudaLaunchKernel_v13000_params {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};
using __cudaLaunchKernel_ptsz_v13000_params = __cudaLaunchKernel_v13000_params;
struct cudaDeviceSynchronize_v3020_params {};
}  // namespace rlscope_fake_params

extern "C" RLSCOPE_FAKE_EXPORT void rlscope_fake_set_operation(const char* operation) {
  t_operation = operation != nullptr ? operation : "(none)";
  t_run_delay.Switch(t_operation);
}

extern "C" RLSCOPE_FAKE_EXPORT void rlscope_fake_cudart_attach_cupti(const RlscopeFakeCuptiBridge* bridge) {
  const bool compatible = bridge != nullptr && bridge->version == RLSCOPE_FAKE_CUPTI_BRIDGE_VERSION;
  if (bridge != nullptr && !compatible) fprintf(stderr, "fake libcudart: fake CUPTI of another version ignored\n");
  g_cupti.store(compatible ? bridge : nullptr, std::memory_order_release);
}

namespace {

// One cuLaunchKernel made by the caller itself, no runtime call around it:
// its driver callbacks, `launch_ns` (scaled) of busy time, and a kernel
// record carrying the driver call's correlation id.
void DriverLaunch(CUfunction function, const LaunchShape& shape, const char* kernel, int64_t launch_ns,
                  uint64_t kernel_ns) {
  auto params = DriverParamsFor<cuLaunchKernel_params>(shape, nullptr);
  if (function != nullptr) params.f = function;
  CUresult result = CUDA_SUCCESS;
  ApiCall call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", &params, &result);
  call.SpinUntil(launch_ns);
  call.Exit("cuLaunchKernel");
  EmitKernel(call, shape, kernel, kernel_ns, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
}

}  // namespace

// A library launching kernels through the driver itself (cuBLAS, XLA):
// driver callbacks and kernel records carrying the driver call's
// correlation id, no runtime call around them.
extern "C" RLSCOPE_FAKE_EXPORT void rlscope_fake_library_gemm(int kernels) {
  EnsureInjected();
  for (int i = 0; i < kernels; ++i) {
    LaunchShape shape;
    shape.grid = dim3(64);
    shape.block = dim3(256);
    DriverLaunch(nullptr, shape, "fake_gemm_kernel", kLibraryLaunchNs, kLibraryKernelNs);
  }
}

// Allocations hand out distinct fake device pointers through their first
// argument. Applied as `AllocatorFor(#name) args`, so it works for any
// parameter list, the empty one included.
struct AllocatorFor {
  explicit AllocatorFor(const char* name)
      : allocates(strstr(name, "Malloc") != nullptr || strstr(name, "HostAlloc") != nullptr) {}
  template <typename First, typename... Rest>
  void operator()(First first, Rest...) const {
    if constexpr (std::is_same_v<First, void**>) {
      if (allocates) FakeAllocate(first);
    }
  }
  void operator()() const {}
  bool allocates;
};

// Each entry point's CUPTI callback id, as the suffix of its
// CUPTI_RUNTIME_TRACE_CBID_* enumerator; <suffix>_params is the parameter
// struct CUPTI passes. A function missing here does not compile.
#define RLSCOPE_CBID___cudaLaunchKernel __cudaLaunchKernel_v13000
#define RLSCOPE_CBID___cudaLaunchKernel_ptsz __cudaLaunchKernel_ptsz_v13000
#define RLSCOPE_CBID_cudaLaunchKernel cudaLaunchKernel_v7000
#define RLSCOPE_CBID_cudaLaunchKernel_ptsz cudaLaunchKernel_ptsz_v7000
#define RLSCOPE_CBID_cudaLaunchCooperativeKernel cudaLaunchCooperativeKernel_v9000
#define RLSCOPE_CBID_cudaLaunchCooperativeKernel_ptsz cudaLaunchCooperativeKernel_ptsz_v9000
#define RLSCOPE_CBID_cudaLaunchKernelExC cudaLaunchKernelExC_v11060
#define RLSCOPE_CBID_cudaLaunchKernelExC_ptsz cudaLaunchKernelExC_ptsz_v11060
#define RLSCOPE_CBID_cudaGraphLaunch cudaGraphLaunch_v10000
#define RLSCOPE_CBID_cudaGraphLaunch_ptsz cudaGraphLaunch_ptsz_v10000
#define RLSCOPE_CBID_cudaMemcpy cudaMemcpy_v3020
#define RLSCOPE_CBID_cudaMemcpy_ptds cudaMemcpy_ptds_v7000
#define RLSCOPE_CBID_cudaMemcpyAsync cudaMemcpyAsync_v3020
#define RLSCOPE_CBID_cudaMemcpyAsync_ptsz cudaMemcpyAsync_ptsz_v7000
#define RLSCOPE_CBID_cudaMemcpy2D cudaMemcpy2D_v3020
#define RLSCOPE_CBID_cudaMemcpy2D_ptds cudaMemcpy2D_ptds_v7000
#define RLSCOPE_CBID_cudaMemcpy2DAsync cudaMemcpy2DAsync_v3020
#define RLSCOPE_CBID_cudaMemcpy2DAsync_ptsz cudaMemcpy2DAsync_ptsz_v7000
#define RLSCOPE_CBID_cudaMemcpyPeer cudaMemcpyPeer_v4000
#define RLSCOPE_CBID_cudaMemcpyPeerAsync cudaMemcpyPeerAsync_v4000
#define RLSCOPE_CBID_cudaMemcpyToSymbol cudaMemcpyToSymbol_v3020
#define RLSCOPE_CBID_cudaMemcpyToSymbol_ptds cudaMemcpyToSymbol_ptds_v7000
#define RLSCOPE_CBID_cudaMemcpyFromSymbol cudaMemcpyFromSymbol_v3020
#define RLSCOPE_CBID_cudaMemcpyFromSymbol_ptds cudaMemcpyFromSymbol_ptds_v7000
#define RLSCOPE_CBID_cudaMemcpyToSymbolAsync cudaMemcpyToSymbolAsync_v3020
#define RLSCOPE_CBID_cudaMemcpyToSymbolAsync_ptsz cudaMemcpyToSymbolAsync_ptsz_v7000
#define RLSCOPE_CBID_cudaMemcpyFromSymbolAsync cudaMemcpyFromSymbolAsync_v3020
#define RLSCOPE_CBID_cudaMemcpyFromSymbolAsync_ptsz cudaMemcpyFromSymbolAsync_ptsz_v7000
#define RLSCOPE_CBID_cudaMemset cudaMemset_v3020
#define RLSCOPE_CBID_cudaMemset_ptds cudaMemset_ptds_v7000
#define RLSCOPE_CBID_cudaMemsetAsync cudaMemsetAsync_v3020
#define RLSCOPE_CBID_cudaMemsetAsync_ptsz cudaMemsetAsync_ptsz_v7000
#define RLSCOPE_CBID_cudaMemset2D cudaMemset2D_v3020
#define RLSCOPE_CBID_cudaMemset2D_ptds cudaMemset2D_ptds_v7000
#define RLSCOPE_CBID_cudaMemset2DAsync cudaMemset2DAsync_v3020
#define RLSCOPE_CBID_cudaMemset2DAsync_ptsz cudaMemset2DAsync_ptsz_v7000
#define RLSCOPE_CBID_cudaMalloc cudaMalloc_v3020
#define RLSCOPE_CBID_cudaFree cudaFree_v3020
#define RLSCOPE_CBID_cudaMallocHost cudaMallocHost_v3020
#define RLSCOPE_CBID_cudaFreeHost cudaFreeHost_v3020
#define RLSCOPE_CBID_cudaHostAlloc cudaHostAlloc_v3020
#define RLSCOPE_CBID_cudaMallocManaged cudaMallocManaged_v6000
#define RLSCOPE_CBID_cudaMallocPitch cudaMallocPitch_v3020
#define RLSCOPE_CBID_cudaMallocAsync cudaMallocAsync_v11020
#define RLSCOPE_CBID_cudaMallocAsync_ptsz cudaMallocAsync_ptsz_v11020
#define RLSCOPE_CBID_cudaFreeAsync cudaFreeAsync_v11020
#define RLSCOPE_CBID_cudaFreeAsync_ptsz cudaFreeAsync_ptsz_v11020
#define RLSCOPE_CBID_cudaDeviceSynchronize cudaDeviceSynchronize_v3020
#define RLSCOPE_CBID_cudaStreamSynchronize cudaStreamSynchronize_v3020
#define RLSCOPE_CBID_cudaStreamSynchronize_ptsz cudaStreamSynchronize_ptsz_v7000
#define RLSCOPE_CBID_cudaEventSynchronize cudaEventSynchronize_v3020

#define RLSCOPE_PASTE_(a, b) a##b
#define RLSCOPE_PASTE(a, b) RLSCOPE_PASTE_(a, b)
#define RLSCOPE_EXPAND(...) __VA_ARGS__

#define RLSCOPE_DEFINE_FAKE(name, params, args)                                                                       \
  extern "C" RLSCOPE_FAKE_EXPORT cudaError_t name params {                                                            \
    using namespace rlscope_fake_params;                                                                              \
    EnsureInjected();                                                                                                 \
    static constexpr Traits kTraits = TraitsOf(#name, RLSCOPE_PASTE(CUPTI_RUNTIME_TRACE_CBID_, RLSCOPE_CBID_##name)); \
    const RLSCOPE_PASTE(RLSCOPE_CBID_##name, _params) call_params{RLSCOPE_EXPAND args};                               \
    cudaError_t result = cudaSuccess;                                                                                 \
    RunRuntimeCall(kTraits, call_params, &result, [&] { AllocatorFor(#name) args; });                                 \
    return result;                                                                                                    \
  }
RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_DEFINE_FAKE)

// ---- What `rlscope calibrate` needs beyond the interposed entry points ----
// On a machine without a GPU the fake is the runtime rlscope calibrate
// measures with (calibration/workloads/calibrate_cuda.cc): device queries,
// two calls rlscope does not interpose (cudaGetDevice, cudaEventRecord:
// CUPTI callbacks only, as NVIDIA's deliver them to a subscriber that
// enabled them) and the three driver entry points of a direct driver
// launch (NVIDIA's are in libcuda.so.1; the workload takes these from the
// fake when it runs on it). Marked as the fake by rlscope_fake_cuda_runtime.

// The CUDA profiler API (rlscope run --capture-range cudaProfilerApi):
// NVIDIA's only tell an attached profiler, which the fake lacks; each call
// delivers its CUPTI callbacks (no parameters, so none are passed). The
// driver's pair, as a program calling it without libcudart would (JAX).
namespace {

template <typename Result>
Result ProfilerCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* function, Result success) {
  EnsureInjected();
  Result result = success;
  ApiCall call(domain, cbid, function, nullptr, &result);
  call.Exit(function);
  return result;
}

}  // namespace

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaProfilerStart() {
  return ProfilerCall(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000,
                      "cudaProfilerStart", cudaSuccess);
}
extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaProfilerStop() {
  return ProfilerCall(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, "cudaProfilerStop",
                      cudaSuccess);
}
extern "C" RLSCOPE_FAKE_EXPORT CUresult cuProfilerStart() {
  return ProfilerCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart",
                      CUDA_SUCCESS);
}
extern "C" RLSCOPE_FAKE_EXPORT CUresult cuProfilerStop() {
  return ProfilerCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop",
                      CUDA_SUCCESS);
}

extern "C" RLSCOPE_FAKE_EXPORT const char* rlscope_fake_cuda_runtime() { return "rlscope fake libcudart.so.13"; }

namespace {

constexpr const char* kFakeDeviceName = "rlscope fake CUDA device (no GPU)";
int g_module_storage;

// A call with nothing to do but its callbacks.
template <typename Params>
cudaError_t CallbacksOnly(CUpti_CallbackId cbid, const char* function, const Params& params) {
  EnsureInjected();
  cudaError_t result = cudaSuccess;
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, function, &params, &result);
  call.Exit(nullptr);
  return result;
}

}  // namespace

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return cudaErrorInvalidValue;
  *version = CUDART_VERSION;
  return cudaSuccess;
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return cudaErrorInvalidValue;
  *version = CUDA_VERSION;
  return cudaSuccess;
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = 1;
  return cudaSuccess;
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaSetDevice(int device) {
  EnsureInjected();  // As the real one initialises the device (and the driver, cuInit).
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device) {
  if (properties == nullptr) return cudaErrorInvalidValue;
  if (device != 0) return cudaErrorInvalidDevice;
  *properties = cudaDeviceProp{};
  snprintf(properties->name, sizeof(properties->name), "%s", kFakeDeviceName);
  return cudaSuccess;
}

extern "C" RLSCOPE_FAKE_EXPORT const char* cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "error (fake libcudart.so.13)";
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = 0;
  return CallbacksOnly(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice",
                       cudaGetDevice_v3020_params{device});
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  if (event == nullptr) return cudaErrorInvalidValue;
  FakeAllocate(reinterpret_cast<void**>(event));
  return cudaSuccess;
}

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }

extern "C" RLSCOPE_FAKE_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  return CallbacksOnly(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, "cudaEventRecord",
                       cudaEventRecord_v3020_params{event, stream});
}

extern "C" RLSCOPE_FAKE_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *module = reinterpret_cast<CUmodule>(&g_module_storage);
  return CUDA_SUCCESS;
}

extern "C" RLSCOPE_FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  if (function == nullptr || module == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *function = reinterpret_cast<CUfunction>(&g_function_storage);
  return CUDA_SUCCESS;
}

extern "C" RLSCOPE_FAKE_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                                                       unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                                       unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                                                       void** args, void** extra) {
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  EnsureInjected();
  LaunchShape shape;
  shape.grid = dim3(grid_x, grid_y, grid_z);
  shape.block = dim3(block_x, block_y, block_z);
  shape.shared_bytes = shared_bytes;
  shape.stream = reinterpret_cast<cudaStream_t>(stream);
  shape.args = args;
  DriverLaunch(function, shape, "fake_kernel", NominalNs("Launch"), kKernelNs);
  return CUDA_SUCCESS;
}
