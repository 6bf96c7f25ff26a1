// bench_cuda_call: time per CUDA runtime call as the program sees it, for
// comparing a bare call with an intercepted one (run it with and without
// `rlscope run`; scripts/bench/run_benchmarks.sh does both).
//
// Calls come in bursts of kBurst with a pause between bursts, so the
// preload's ring never fills: this measures the recording path, not the
// (cheaper) dropping path. Prints the median ns per call over the bursts.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

constexpr int kBurst = 4000;  // Half a ring (8192 records): never drops.

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  const int bursts = argc > 1 ? atoi(argv[1]) : 200;
  std::vector<double> per_call_ns;
  for (int b = 0; b < bursts; ++b) {
    const int64_t begin = NowNs();
    for (int i = 0; i < kBurst; ++i) cudaStreamSynchronize(nullptr);
    per_call_ns.push_back(static_cast<double>(NowNs() - begin) / kBurst);
    timespec pause{0, 25'000'000};  // Longer than the flush interval (20 ms).
    nanosleep(&pause, nullptr);
  }
  std::sort(per_call_ns.begin(), per_call_ns.end());
  printf("%.2f\n", per_call_ns[per_call_ns.size() / 2]);
  return 0;
}
