// bench_sim_call: time per call of a trivial simulator-library function
// (libsimtest's simtest_add) through the program's PLT, for comparing a bare
// call with one routed through a trampoline: run it with and without
// `rlscope run --sim '*libsimtest*:simtest_*'` (scripts/bench/
// run_benchmarks.sh does both).
//
//   bench_sim_call [BURSTS]
// prints two medians, ns per call:
//   outer   each call is an outermost hooked call: recorded (entry, two
//           timestamps, shadow-stack push/pop, one 32-byte record);
//   nested  calls made inside one hooked call (simtest_call's callback):
//           the pass-through path (registers saved, enter says no, jmp).
// Bursts of kBurst calls are spaced 25 ms so the preload's ring (8192
// records, drained every 20 ms) never fills: this measures recording, not
// the cheaper dropping path.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "../../test/native/simtest.h"

namespace {

constexpr int kBurst = 4000;  // Half a ring: never drops.

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

volatile int g_sink;

void Burst(void*) {
  int sum = 0;
  for (int i = 0; i < kBurst; ++i) sum += simtest_add(i, 1);
  g_sink = sum;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int bursts = argc > 1 ? atoi(argv[1]) : 100;
  std::vector<double> outer_ns, nested_ns;
  for (int b = 0; b < bursts; ++b) {
    int64_t begin = NowNs();
    Burst(nullptr);
    outer_ns.push_back(static_cast<double>(NowNs() - begin) / kBurst);
    begin = NowNs();
    simtest_call(&Burst, nullptr);  // One (recorded) outer call around the burst.
    nested_ns.push_back(static_cast<double>(NowNs() - begin) / kBurst);
    timespec pause{0, 25'000'000};  // Longer than the flush interval (20 ms).
    nanosleep(&pause, nullptr);
  }
  printf("%.2f %.2f\n", Median(outer_ns), Median(nested_ns));
  return 0;
}
