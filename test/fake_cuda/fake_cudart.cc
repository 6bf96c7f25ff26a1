// A fake libcudart.so.13 for GPU-less tests. Every entry point rlscope
// interposes (preload/cuda_runtime_api_list.h) busy-waits a fixed duration,
// distinct per function family, and accounts the exact time it spent inside
// itself per (operation, function): the ground truth the end-to-end tests
// compare rlscope's report with.
//
// Knobs (environment):
//   RLSCOPE_FAKE_CUDART_LOG    write the accounting as JSON to <value>.<pid>
//                              at exit
//   RLSCOPE_FAKE_CUDART_SCALE  multiply every duration (0: return at once
//                              without accounting: a bare call, for
//                              measuring interception cost)
// The program tells the fake which operation it is in through
// rlscope_fake_set_operation() (the fake cannot see NVTX).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_runtime_api_list.h"

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

// Nominal busy time per family, in nanoseconds: different on purpose, so a
// report that mixes them up cannot pass.
int64_t NominalNs(const char* function) {
  const std::string name = function;
  if (name.find("Launch") != std::string::npos) return 20000;
  if (name.find("Memcpy") != std::string::npos) return 50000;
  if (name.find("Memset") != std::string::npos) return 15000;
  if (name.find("Synchronize") != std::string::npos) return 40000;
  if (name.find("Free") != std::string::npos) return 25000;
  return 30000;  // Allocations.
}

thread_local std::string t_operation = "(none)";

struct Accounting {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> ns_and_calls;
};
Accounting& Ledger() {
  static Accounting* ledger = new Accounting();  // Never destroyed: used from exit paths.
  return *ledger;
}

class FakeCall {
 public:
  // With scale 0 a call does nothing at all (no clock, no accounting): the
  // benchmarks measure interception against this bare call.
  explicit FakeCall(const char* function) : function_(function) {
    if (Scale() <= 0) return;
    begin_ns_ = NowNs();
    const auto busy_ns = static_cast<int64_t>(static_cast<double>(NominalNs(function)) * Scale());
    while (NowNs() - begin_ns_ < busy_ns) {
    }
  }
  ~FakeCall() {
    if (Scale() <= 0) return;
    const int64_t spent_ns = NowNs() - begin_ns_;
    Accounting& ledger = Ledger();
    std::lock_guard<std::mutex> lock(ledger.mutex);
    auto& entry = ledger.ns_and_calls[{t_operation, function_}];
    entry.first += spent_ns;
    entry.second += 1;
  }

 private:
  const char* function_;
  int64_t begin_ns_ = 0;
};

std::atomic<uintptr_t> g_next_pointer{0x10000};

void FakeAllocate(void** pointer) {
  if (pointer != nullptr) *pointer = reinterpret_cast<void*>(g_next_pointer.fetch_add(0x1000));
}

// A fork() child starts with an empty ledger: the calls before the fork
// were the parent's.
__attribute__((constructor)) void ClearLedgerInForkChildren() {
  pthread_atfork(nullptr, nullptr, [] { Ledger().ns_and_calls.clear(); });
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
    fprintf(out, "%s\n {\"operation\": \"%s\", \"function\": \"%s\", \"ns\": %lld, \"calls\": %lld}",
            first ? "" : ",", key.first.c_str(), key.second.c_str(), static_cast<long long>(value.first),
            static_cast<long long>(value.second));
    first = false;
  }
  fprintf(out, "\n]}\n");
  fclose(out);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void rlscope_fake_set_operation(const char* operation) {
  t_operation = operation != nullptr ? operation : "(none)";
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

#define RLSCOPE_DEFINE_FAKE(name, params, args)                                \
  extern "C" __attribute__((visibility("default"))) cudaError_t name params { \
    FakeCall call(#name);                                                      \
    AllocatorFor(#name) args;                                                  \
    return cudaSuccess;                                                        \
  }
RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_DEFINE_FAKE)
