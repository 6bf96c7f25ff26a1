// bench_timers: what one timestamp costs on this machine: the TSC read the
// hooks use (rdtsc) and clock_gettime(CLOCK_MONOTONIC), the fallback. Every
// recorded hook reads the clock twice, so this bounds how cheap a hook can
// be here (virtual machines may make either slow). Also what the flusher
// pays per live thread per blocked-span sample (preload/thread_idle.h): a
// read of the thread's CPU clock, and for an idle thread its schedstat and
// its stat (whether it is runnable).
//
//   bench_timers [ITERATIONS]   (default 20000000; the per-thread readings
//                                take a hundredth of that)
//
// Prints: rdtsc_ns, clock_gettime_ns, thread_cpu_clock_ns,
// thread_schedstat_ns, thread_stat_ns (per call, best of 5 runs).
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "preload/thread_idle.h"

namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

template <typename Read>
double BestNsPerCall(uint64_t iterations, Read read) {
  double best = 1e300;
  for (int run = 0; run < 5; ++run) {
    uint64_t sink = 0;
    const int64_t start = NowNs();
    for (uint64_t i = 0; i < iterations; ++i) sink += read();
    const int64_t elapsed = NowNs() - start;
    if (sink == 42) puts("");  // Keeps the reads.
    best = std::min(best, static_cast<double>(elapsed) / static_cast<double>(iterations));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t iterations = argc > 1 ? strtoull(argv[1], nullptr, 10) : 20'000'000;
  printf("rdtsc_ns %.2f\n", BestNsPerCall(iterations, [] { return __rdtsc(); }));
  printf("clock_gettime_ns %.2f\n", BestNsPerCall(iterations, [] { return static_cast<uint64_t>(NowNs()); }));
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  const uint64_t readings = std::max<uint64_t>(1, iterations / 100);
  printf("thread_cpu_clock_ns %.2f\n",
         BestNsPerCall(readings, [tid] { return static_cast<uint64_t>(rlscope::preload::ThreadCpuNs(tid)); }));
  printf("thread_schedstat_ns %.2f\n",
         BestNsPerCall(readings, [tid] { return static_cast<uint64_t>(rlscope::preload::ThreadWaitedNs(tid)); }));
  printf("thread_stat_ns %.2f\n",
         BestNsPerCall(readings, [tid] { return static_cast<uint64_t>(rlscope::preload::ThreadRunnable(tid)); }));
  return 0;
}
