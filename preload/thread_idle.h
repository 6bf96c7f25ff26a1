// ThreadIdle: tells, from outside a thread, the spans in which it was
// blocked. About every kIdleSampleIntervalNs the flusher reads every live
// traced thread's CPU clock; a span of at least kMinIdleSpanNs in which the
// thread ran for at most a kMaxIdleBusyDivisor-th of it is a candidate. A
// candidate is a blocked span, sent as wire kThreadIdle, when the thread
// also did not wait for a CPU (its schedstat's run delay, read only for
// candidates: a thread that waits for a CPU on a busy machine is not
// blocked, it would have run). The run delay must be known at both ends:
// it is also read at a thread's first reading and after a span in which
// the thread ran at most half the time, where a blocked stretch most often
// begins, so that stretch is sent from its first whole span; one that
// begins right at a reading after a busy span is sent from its second.
//
// Why from outside: the Python hook sees a wait only when a known blocking
// C function is called (blocking_calls.h). A pipe read by iteration
// (`for line in f:`; multiprocessing's resource tracker does it all run
// long), a wait inside a native library's own code and a wait for the GIL
// make no such call.
//
// Cost, on the flusher's thread: a clock read per live thread per sample
// (0.37 us), and for idle and half-idle threads an open/pread/close of
// /proc/self/task/TID/schedstat (4 us; both scripts/bench/bench_timers on a
// 2-core VM, scripts/bench/RESULTS.md).
#ifndef RLSCOPE_PRELOAD_THREAD_IDLE_H_
#define RLSCOPE_PRELOAD_THREAD_IDLE_H_

#include <cstdint>

namespace rlscope::preload {

inline constexpr int64_t kIdleSampleIntervalNs = 20'000'000;
inline constexpr int64_t kMinIdleSpanNs = 5'000'000;
inline constexpr int64_t kMaxIdleBusyDivisor = 20;  // Busy for at most a twentieth of the span.
inline constexpr int64_t kPartlyIdleDivisor = 2;    // Ran at most half: the run delay is read too.

// ParseSchedstatBusyNs: schedstat's first two fields (ran, waited for a
// CPU) summed into *busy_ns; false when the text is not that.
bool ParseSchedstatBusyNs(const char* text, int64_t* busy_ns);

// ThreadCpuNs: the CPU time thread `tid` of this process has run (its
// kernel CPU clock); -1 when it cannot be read (the thread is gone).
int64_t ThreadCpuNs(uint32_t tid);

// ThreadBusyNs: thread `tid`'s schedstat, ran plus waited for a CPU; -1
// when it cannot be read (the thread is gone, no /proc).
int64_t ThreadBusyNs(uint32_t tid);

// IdleSample: one thread's last reading (flusher-owned, in its buffer).
struct IdleSample {
  uint64_t instance = 0;  // The thread instance it belongs to (0: none yet).
  int64_t wall_ns = 0;
  int64_t cpu_ns = -1;
  int64_t busy_ns = -1;  // -1: not read at this sample.
};

// IdleReader: how NextIdleSample reads a thread (ThreadCpuNs and
// ThreadBusyNs, or a test's stand-ins).
struct IdleReader {
  int64_t (*cpu_ns)(uint32_t tid);
  int64_t (*busy_ns)(uint32_t tid);
};

// NextIdleSample: reads thread (tid, instance) at wall_ns into `last`;
// true, with the span in *begin_ns and *end_ns, when the time since the
// previous reading of the same instance was a blocked span.
bool NextIdleSample(IdleSample& last, uint32_t tid, uint64_t instance, int64_t wall_ns, const IdleReader& reader,
                    int64_t* begin_ns, int64_t* end_ns);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_THREAD_IDLE_H_
