// ThreadCpuWait: how long each traced thread waited for a CPU while it
// wanted one, beside the CPU time it ran. About every
// kCpuWaitSampleIntervalNs the flusher reads each live traced thread's
// schedstat (time run, run delay) and sends the span's two amounts as a
// wire kThreadCpuWait event.
//
// Why: on a machine with more runnable threads than CPUs, a thread gets
// its share of a CPU, so each nanosecond of CPU it uses, rlscope's hooks'
// included, costs it about 1 + waited/ran nanoseconds of wall time. The
// calibration prices the hooks in CPU time (its estimators are made so
// that contention cannot inflate them); the overhead correction scales
// each price by the thread's ratio where it was paid
// (report/cpu_contention.h). Unscaled, a run beside two busy loops on two
// cores kept 15-23 % of the fake CUDA client's 30-40 % overhead
// (test/e2e/correction_e2e_test.py's validate case, 2026-12-07).
//
// Cost, on the flusher's thread: an open/pread/close of
// /proc/self/task/TID/schedstat per live thread per sample (4-6 us, every
// 200 ms: 0.003 % of a core per thread).
#ifndef RLSCOPE_PRELOAD_THREAD_CPU_WAIT_H_
#define RLSCOPE_PRELOAD_THREAD_CPU_WAIT_H_

#include <cstdint>

namespace rlscope::preload {

inline constexpr int64_t kCpuWaitSampleIntervalNs = 200'000'000;

// Schedstat: a thread's /proc schedstat: time run and time waited for a
// CPU (ns), and how many times it got a CPU (each after a wait, be it
// a wake-up's few microseconds or a busy machine's milliseconds).
struct Schedstat {
  int64_t ran_ns = 0;
  int64_t waited_ns = 0;
  int64_t runs = 0;
};

// ParseSchedstat: schedstat's text; false when it is not schedstat's (the
// run count, absent from some kernels' text, is then 0).
bool ParseSchedstat(const char* text, Schedstat* stat);

// ThreadSchedstat: thread `tid`'s schedstat; false when it cannot be read
// (the thread is gone, no /proc, a kernel without schedstats).
bool ThreadSchedstat(uint32_t tid, Schedstat* stat);
using SchedstatReader = bool (*)(uint32_t tid, Schedstat* stat);

// CpuWaitReading: one thread's last reading (flusher-owned, in its buffer).
struct CpuWaitReading {
  uint64_t instance = 0;  // The thread instance it belongs to (0: none yet).
  int64_t wall_ns = 0;    // When it was last read, or tried.
  bool valid = false;     // Whether `stat` holds that reading.
  Schedstat stat;
};

// CpuWaitSpan: what a thread ran and waited for a CPU in [begin, end),
// and how many times it got one.
struct CpuWaitSpan {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  Schedstat stat;
};

// NextCpuWaitSample: reads thread (tid, instance) into `last` when a
// reading is due (the thread's first, or kCpuWaitSampleIntervalNs after
// the last one tried; `force`: at any time, as at the final flush), at
// the time `now()` gives as it reads; returns true and the span since the
// last reading in *span when there is one to send (not at a thread's
// first reading, after a failed one, or when the counters went back).
bool NextCpuWaitSample(CpuWaitReading& last, uint32_t tid, uint64_t instance, int64_t (*now)(), bool force,
                       SchedstatReader read, CpuWaitSpan* span);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_THREAD_CPU_WAIT_H_
