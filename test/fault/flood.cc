// flood: an event flood for rlscope's guarantees under load. THREADS threads
// each call a hooked CUDA runtime entry point (cudaStreamSynchronize on the
// fake runtime: with RLSCOPE_FAKE_CUDART_SCALE=0 it returns at once, so the
// event rate is bounded by the hook, not by the call) in a tight loop for
// SECONDS, optionally paced to RATE calls/s in total.
//
//   flood [--threads N] [--seconds S] [--rate CALLS_PER_S]
//
// It counts its own calls exactly (the ground truth the test compares with
// the report), times every call with the TSC (the longest time one call kept
// a thread), counts the thread's voluntary context switches inside its
// batches of calls (pacing sleeps are outside them: a hook that waited for
// anything - a lock, the flusher, a socket - would make one; preemption on
// a busy machine is involuntary and counted apart; the batches of the
// thread's first kRingRecords calls are counted apart too) and prints one
// JSON object on stdout:
//   threads: [{tid, calls, max_call_ns, max_call_net_ns, stalls_over_1ms,
//              _10ms, _100ms, waits_in_calls, preemptions_in_calls,
//              waits_in_first_ring}],
//   calls, seconds, rate (calls/s reached), max_call_ns, max_call_net_ns,
//   waits_in_calls, vm_hwm_kb.
// max_call_net_ns: per batch, its longest call less the time the thread
// waited for a CPU during the batch (test/support/run_delay.h; the plain
// maximum where the kernel does not say): what rlscope can have held a
// thread, whatever else the machine runs.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "test/support/run_delay.h"

namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

struct ThreadResult {
  uint32_t tid = 0;
  uint64_t calls = 0;
  uint64_t max_call_ticks = 0;
  double max_call_net_ns = 0;
  uint64_t over_ticks[3] = {};  // Calls longer than 1 ms, 10 ms, 100 ms.
  long waits = 0;               // Voluntary context switches inside batches.
  long preemptions = 0;         // Involuntary ones.
  // Voluntary switches while the thread's first kRingRecords calls fill its
  // ring for the first time: rlscope maps the ring at the first call and
  // each page is faulted in at its first record, and a page fault can wait
  // for the kernel's memory-map lock while another thread of the process
  // maps memory (its ring, the flusher's buffers). Past that, a record
  // touches only resident pages.
  long waits_in_first_ring = 0;
};

rusage ThreadUsage() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage;
}

struct Plan {
  double seconds = 10;
  double rate_per_thread = 0;  // 0: as fast as possible.
  uint64_t tick_thresholds[3] = {};
  double ticks_per_ns = 1;
  std::atomic<bool>* start = nullptr;
};

// Pacing is checked every kPaceEvery calls so the clock read stays off the
// per-call path; the per-call cost is two TSC reads around the call.
constexpr uint64_t kPaceEvery = 1024;
// The preload's ring, in records (ThreadBuffer::kCapacity, 1 MiB).
constexpr uint64_t kRingRecords = 32768;

void Flood(const Plan& plan, ThreadResult* result) {
  result->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  while (!plan.start->load(std::memory_order_acquire)) {
  }
  const int64_t begin_ns = NowNs();
  const int64_t end_ns = begin_ns + static_cast<int64_t>(plan.seconds * 1e9);
  uint64_t calls = 0, max_ticks = 0;
  uint64_t over[3] = {};
  const int schedstat = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  for (;;) {
    const rusage before_batch = ThreadUsage();
    const long long delay_before = RlscopeTestRunDelayNsFrom(schedstat);
    uint64_t batch_max_ticks = 0;
    for (uint64_t i = 0; i < kPaceEvery; ++i) {
      const uint64_t before = __rdtsc();
      cudaStreamSynchronize(nullptr);
      const uint64_t took = __rdtsc() - before;
      batch_max_ticks = std::max(batch_max_ticks, took);
      if (__builtin_expect(took > plan.tick_thresholds[0], 0)) {
        for (int k = 0; k < 3; ++k) over[k] += took > plan.tick_thresholds[k];
      }
    }
    calls += kPaceEvery;
    max_ticks = std::max(max_ticks, batch_max_ticks);
    const long long delay_after = RlscopeTestRunDelayNsFrom(schedstat);
    const double waited_ns = delay_before >= 0 && delay_after >= delay_before ? delay_after - delay_before : 0;
    result->max_call_net_ns =
        std::max(result->max_call_net_ns, static_cast<double>(batch_max_ticks) / plan.ticks_per_ns - waited_ns);
    const rusage after_batch = ThreadUsage();
    (calls <= kRingRecords ? result->waits_in_first_ring : result->waits) +=
        after_batch.ru_nvcsw - before_batch.ru_nvcsw;
    result->preemptions += after_batch.ru_nivcsw - before_batch.ru_nivcsw;
    int64_t now = NowNs();
    if (now >= end_ns) break;
    if (plan.rate_per_thread > 0) {
      const int64_t due_ns = begin_ns + static_cast<int64_t>(static_cast<double>(calls) / plan.rate_per_thread * 1e9);
      if (due_ns > now) {
        const int64_t wait_ns = std::min(due_ns, end_ns) - now;
        timespec pause{wait_ns / 1000000000, wait_ns % 1000000000};
        nanosleep(&pause, nullptr);
      }
    }
  }
  if (schedstat >= 0) close(schedstat);
  result->calls = calls;
  result->max_call_ticks = max_ticks;
  std::copy(over, over + 3, result->over_ticks);
}

// TicksPerNs: the TSC rate, measured against CLOCK_MONOTONIC over 50 ms.
double TicksPerNs() {
  const int64_t begin_ns = NowNs();
  const uint64_t begin = __rdtsc();
  timespec pause{0, 50'000'000};
  nanosleep(&pause, nullptr);
  return static_cast<double>(__rdtsc() - begin) / static_cast<double>(NowNs() - begin_ns);
}

long VmHwmKb() {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof(line), status) != nullptr) {
    if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, nullptr, 10);
  }
  fclose(status);
  return kb;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 8;
  Plan plan;
  double rate = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") {
      threads = atoi(argv[i + 1]);
    } else if (flag == "--seconds") {
      plan.seconds = atof(argv[i + 1]);
    } else if (flag == "--rate") {
      rate = atof(argv[i + 1]);
    } else {
      fprintf(stderr, "usage: flood [--threads N] [--seconds S] [--rate CALLS_PER_S]\n");
      return 2;
    }
  }
  if (threads < 1) threads = 1;
  plan.rate_per_thread = rate / threads;
  const double ticks_per_ns = TicksPerNs();
  plan.ticks_per_ns = ticks_per_ns;
  const double thresholds_ns[3] = {1e6, 1e7, 1e8};
  for (int k = 0; k < 3; ++k) plan.tick_thresholds[k] = static_cast<uint64_t>(thresholds_ns[k] * ticks_per_ns);
  cudaStreamSynchronize(nullptr);  // Load and resolve everything before the clock starts.

  std::atomic<bool> start{false};
  plan.start = &start;
  std::vector<ThreadResult> results(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(Flood, std::cref(plan), &results[t]);
  const int64_t begin_ns = NowNs();
  start.store(true, std::memory_order_release);
  for (std::thread& worker : workers) worker.join();
  const double elapsed_s = static_cast<double>(NowNs() - begin_ns) / 1e9;

  uint64_t total = 0, max_ticks = 0;
  double max_net_ns = 0;
  long waits = 0;
  std::string per_thread;
  for (const ThreadResult& r : results) {
    total += r.calls;
    max_ticks = std::max(max_ticks, r.max_call_ticks);
    max_net_ns = std::max(max_net_ns, r.max_call_net_ns);
    waits += r.waits;
    char entry[360];
    snprintf(entry, sizeof(entry),
             "%s{\"tid\": %u, \"calls\": %llu, \"max_call_ns\": %.0f, \"max_call_net_ns\": %.0f, "
             "\"stalls_over_1ms\": %llu, "
             "\"stalls_over_10ms\": %llu, \"stalls_over_100ms\": %llu, \"waits_in_calls\": %ld, "
             "\"preemptions_in_calls\": %ld, \"waits_in_first_ring\": %ld}",
             per_thread.empty() ? "" : ", ", r.tid, static_cast<unsigned long long>(r.calls),
             static_cast<double>(r.max_call_ticks) / ticks_per_ns, r.max_call_net_ns,
             static_cast<unsigned long long>(r.over_ticks[0]), static_cast<unsigned long long>(r.over_ticks[1]),
             static_cast<unsigned long long>(r.over_ticks[2]), r.waits, r.preemptions, r.waits_in_first_ring);
    per_thread += entry;
  }
  // The warm-up call above is the main thread's; the threads' calls are all
  // the flood's.
  printf(
      "{\"threads\": [%s], \"calls\": %llu, \"seconds\": %.3f, \"rate\": %.0f, \"max_call_ns\": %.0f, "
      "\"max_call_net_ns\": %.0f, \"waits_in_calls\": %ld, \"vm_hwm_kb\": %ld}\n",
      per_thread.c_str(), static_cast<unsigned long long>(total), elapsed_s, static_cast<double>(total) / elapsed_s,
      static_cast<double>(max_ticks) / ticks_per_ns, max_net_ns, waits, VmHwmKb());
  return 0;
}
