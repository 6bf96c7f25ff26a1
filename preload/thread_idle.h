// ThreadIdle: tells, from outside a thread, the spans in which it was
// blocked. About every kIdleSampleIntervalNs the flusher reads every live
// traced thread's CPU clock; a span of at least kMinIdleSpanNs in which the
// thread ran for at most a kMaxIdleBusyDivisor-th of it is a candidate. A
// candidate is a blocked span, sent as wire kThreadIdle, when the thread
// also did not wait for a CPU (its schedstat's run delay, read only for
// candidates: a thread that waits for a CPU on a busy machine is not
// blocked, it would have run). The kernel adds a wait for a CPU to the
// run delay only once the thread gets one, so a thread kept off the CPUs
// for the whole span (a busy machine, a low priority) shows neither CPU
// time nor run delay there: a span in which the thread never got a CPU
// (schedstat's count of timeslices unchanged) is blocked only if the
// thread is not runnable (state R) at its end. One in which it got a CPU,
// as a thread waiting for the GIL does every few milliseconds, has its
// waits for a CPU counted already. The price: the span in which a thread
// blocked all along is woken and still waits for a CPU at the reading is
// not sent, and on a machine so busy that a thread woken to ask for the
// GIL waits whole spans for a CPU, those spans are not its wait either
// (under `nice -n 19` beside a build, 13-55 % of a GIL wait was found;
// two CPU hogs on two cores leave it found, 1.30 s of a 1.40 s hold).
// The run delay must be known at both ends: it is also read at a
// thread's first reading and after a span in which the thread ran at most
// half the time, where a blocked stretch most often begins, so that
// stretch is sent from its first whole span; one that begins right at a
// reading after a busy span is sent from its second.
//
// Why from outside: the Python hook sees a wait only when a known blocking
// C function is called (blocking_calls.h). A pipe read by iteration
// (`for line in f:`; multiprocessing's resource tracker does it all run
// long), a wait inside a native library's own code and a wait for the GIL
// make no such call.
//
// Cost, on the flusher's thread: a clock read per live thread per sample
// (0.37 us), for idle and half-idle threads an open/pread/close of
// /proc/self/task/TID/schedstat (4 us; both scripts/bench/bench_timers on a
// 2-core VM, scripts/bench/RESULTS.md), and for spans idle by both clocks
// in which the thread got no CPU (so every sample of a thread blocked
// throughout) an open/pread/close of /proc/self/task/TID/stat too.
#ifndef RLSCOPE_PRELOAD_THREAD_IDLE_H_
#define RLSCOPE_PRELOAD_THREAD_IDLE_H_

#include <cstdint>

namespace rlscope::preload {

inline constexpr int64_t kIdleSampleIntervalNs = 20'000'000;
inline constexpr int64_t kMinIdleSpanNs = 5'000'000;
inline constexpr int64_t kMaxIdleBusyDivisor = 20;  // Busy for at most a twentieth of the span.
inline constexpr int64_t kPartlyIdleDivisor = 2;    // Ran at most half: the run delay is read too.

// SchedStat: a thread's /proc schedstat: the time it ran plus the time it
// waited for a CPU, and how many times it got one (timeslices).
struct SchedStat {
  int64_t busy_ns = -1;  // -1: not read.
  int64_t slices = 0;
};

// ParseSchedstat: schedstat's three fields into *stat; false when the text
// is not that.
bool ParseSchedstat(const char* text, SchedStat* stat);

// ThreadCpuNs: the CPU time thread `tid` of this process has run (its
// kernel CPU clock); -1 when it cannot be read (the thread is gone).
int64_t ThreadCpuNs(uint32_t tid);

// ThreadSchedStat: thread `tid`'s schedstat; busy_ns -1 when it cannot be
// read (the thread is gone, no /proc).
SchedStat ThreadSchedStat(uint32_t tid);

// ParseStatState: the state letter of a /proc/.../stat line ("R", "S",
// "D", ...: the field after the command's closing parenthesis, the last
// one in the line, since the command may hold any character); 0 when the
// text is not that.
char ParseStatState(const char* text);

// ThreadRunnable: whether thread `tid` is running or waiting for a CPU
// (state R); false when it is not or cannot be read.
bool ThreadRunnable(uint32_t tid);

// IdleSample: one thread's last reading (flusher-owned, in its buffer).
struct IdleSample {
  uint64_t instance = 0;  // The thread instance it belongs to (0: none yet).
  int64_t wall_ns = 0;
  int64_t cpu_ns = -1;
  SchedStat sched;  // busy_ns -1: not read at this sample.
};

// IdleReader: how NextIdleSample reads a thread (ThreadCpuNs,
// ThreadSchedStat and ThreadRunnable, or a test's stand-ins).
struct IdleReader {
  int64_t (*cpu_ns)(uint32_t tid);
  SchedStat (*sched_stat)(uint32_t tid);
  bool (*runnable)(uint32_t tid);
};

// NextIdleSample: reads thread (tid, instance) at wall_ns into `last`;
// true, with the span in *begin_ns and *end_ns, when the time since the
// previous reading of the same instance was a blocked span.
bool NextIdleSample(IdleSample& last, uint32_t tid, uint64_t instance, int64_t wall_ns, const IdleReader& reader,
                    int64_t* begin_ns, int64_t* end_ns);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_THREAD_IDLE_H_
