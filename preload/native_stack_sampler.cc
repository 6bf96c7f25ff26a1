#include "preload/native_stack_sampler.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

#include "preload/code_range.h"
#include "preload/loader_gate.h"
#include "preload/problem_notice.h"
#include "preload/python_hook.h"
#include "preload/raw_log.h"
#include "preload/recorder.h"

namespace rlscope::preload {

namespace {

using BacktraceFunction = int (*)(void**, int);

constexpr int kMaxWalked = 48;  // Frames unwound (ours included).
constexpr int kMaxKept = 32;    // Frames recorded.

BacktraceFunction g_backtrace = nullptr;
// libunwind is loaded at the first sample a thread takes, so processes that
// never sample (Python programs) never load it. 0: not yet, 1: loading or
// unavailable, 2: ready.
std::atomic<int> g_unwinder_state{0};
CodeRange g_own_code;  // The preload's code: its frames are skipped.
int64_t g_interval_ns = 1'000'000;
// Until the flusher knows the tick rate, assume 1 tick per ns (exact for
// clock_gettime ticks; a TSC runs faster, so early samples come sooner).
std::atomic<uint64_t> g_interval_ticks{1'000'000};

__thread uint64_t t_last_sample_ticks __attribute__((tls_model("initial-exec")));

bool g_sampling_enabled = true;

bool LoadUnwinder() {
  int expected = 0;
  if (!g_unwinder_state.compare_exchange_strong(expected, 1)) return expected == 2;
  void* library = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) {
    ReportProblem("native-stacks", "libunwind.so.8 is not available (%s): native programs get no inferred operations",
                  dlerror());
    return false;  // Stays 1: never tried again.
  }
  // Per-thread caches: the default global cache takes a lock that a fork()
  // in another thread could leave held in the child.
  using SetCachingPolicy = int (*)(void*, int);
  auto set_caching_policy = reinterpret_cast<SetCachingPolicy>(dlsym(library, "_ULx86_64_set_caching_policy"));
  auto* address_space = static_cast<void**>(dlsym(library, "_ULx86_64_local_addr_space"));
  constexpr int kCachePerThread = 2;  // UNW_CACHE_PER_THREAD.
  if (set_caching_policy != nullptr && address_space != nullptr) set_caching_policy(*address_space, kCachePerThread);
  g_backtrace = reinterpret_cast<BacktraceFunction>(dlsym(library, "unw_backtrace"));
  if (g_backtrace == nullptr) return false;
  g_unwinder_state.store(2, std::memory_order_release);
  return true;
}

}  // namespace

void InitNativeStackSampler() {
  if (const char* text = getenv("RLSCOPE_STACK_INTERVAL_US"); text != nullptr && *text) {
    g_interval_ns = static_cast<int64_t>(strtod(text, nullptr) * 1000);
    if (g_interval_ns <= 0) {
      g_sampling_enabled = false;  // 0 turns sampling off.
      return;
    }
    g_interval_ticks.store(static_cast<uint64_t>(g_interval_ns), std::memory_order_relaxed);
  }
  g_own_code = CodeRangeContaining(reinterpret_cast<const void*>(&InitNativeStackSampler));
}

void SetStackSampleTicksPerNs(double ticks_per_ns) {
  if (ticks_per_ns > 0) {
    g_interval_ticks.store(static_cast<uint64_t>(static_cast<double>(g_interval_ns) * ticks_per_ns),
                           std::memory_order_relaxed);
  }
}

bool MaybeSampleNativeStack(uint64_t now_ticks) {
  if (!g_sampling_enabled || now_ticks - t_last_sample_ticks < g_interval_ticks.load(std::memory_order_relaxed) ||
      ThreadRunsPython()) {
    return false;
  }
  // libunwind's walk calls dl_iterate_phdr (and loading it, dlopen): a
  // fork being prepared skips this sample rather than wait (loader_gate.h).
  if (!LoaderGate::TryEnter()) return false;
  if (g_unwinder_state.load(std::memory_order_acquire) != 2 && !LoadUnwinder()) {
    LoaderGate::Leave();
    return false;
  }
  t_last_sample_ticks = now_ticks;
  void* walked[kMaxWalked];
  const int depth = g_backtrace(walked, kMaxWalked);
  LoaderGate::Leave();
  uint64_t frames[kMaxKept];
  int kept = 0;
  for (int i = 0; i < depth && kept < kMaxKept; ++i) {
    const auto address = reinterpret_cast<uintptr_t>(walked[i]);
    if (g_own_code.Contains(address)) continue;  // rlscope's own frames.
    frames[kept++] = address;
  }
  if (kept == 0) return true;
  // end: when sampling was done, so the correction can remove its cost.
  Record(wire::EventKind::kNativeStack, static_cast<uint32_t>(kept), now_ticks, NowTicks(), frames[0]);
  for (int i = 1; i < kept; i += 3) {
    Record(wire::EventKind::kNativeStackFrames, 0, frames[i], i + 1 < kept ? frames[i + 1] : 0,
           i + 2 < kept ? frames[i + 2] : 0);
  }
  return true;
}

}  // namespace rlscope::preload
