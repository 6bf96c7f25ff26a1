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

// ParseSchedstat: schedstat's first two fields (time run, time waited for
// a CPU, in ns); false when the text is not schedstat's.
bool ParseSchedstat(const char* text, int64_t* ran_ns, int64_t* waited_ns);

// ThreadSchedstat: thread `tid`'s schedstat; false when it cannot be read
// (the thread is gone, no /proc, a kernel without schedstats).
bool ThreadSchedstat(uint32_t tid, int64_t* ran_ns, int64_t* waited_ns);
using SchedstatReader = bool (*)(uint32_t tid, int64_t* ran_ns, int64_t* waited_ns);

// CpuWaitReading: one thread's last reading (flusher-owned, in its buffer).
struct CpuWaitReading {
  uint64_t instance = 0;  // The thread instance it belongs to (0: none yet).
  int64_t wall_ns = 0;
  int64_t ran_ns = 0;
  int64_t waited_ns = 0;
};

// CpuWaitSpan: what a thread ran and waited for a CPU in [begin, end).
struct CpuWaitSpan {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t ran_ns = 0;
  int64_t waited_ns = 0;
};

// NextCpuWaitSample: reads thread (tid, instance) at wall_ns into `last`
// when a sample is due (its first reading, or kCpuWaitSampleIntervalNs
// after the last; `force`: at any time, as at the final flush); returns
// true and the span since the last reading in *span when there is one to
// send (not at a thread's first reading, nor when the counters went back).
bool NextCpuWaitSample(CpuWaitReading& last, uint32_t tid, uint64_t instance, int64_t wall_ns, bool force,
                       SchedstatReader read, CpuWaitSpan* span);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_THREAD_CPU_WAIT_H_
