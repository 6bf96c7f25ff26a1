// ThreadIdle: tells, from outside a thread, the time in which it was
// blocked. About every kIdleSampleIntervalNs the flusher reads every live
// traced thread's CPU clock. In a span of at least kMinIdleSpanNs in which
// the thread ran for at most a kMaxIdleBusyDivisor-th of it, the time it
// neither ran nor waited for a CPU (its schedstat's run delay: a thread
// that waits for a CPU on a busy machine is not blocked, it would have
// run) is blocked time, sent as a wire kThreadIdle span from the span's
// start.
//
// The kernel adds a wait for a CPU to the run delay only when the wait
// ends, as the thread gets a CPU: a thread kept off the CPUs through a
// whole span looks blocked in it. So blocked time that ends with the
// thread runnable (/proc's state R) is held back until the thread has run
// again (or is no longer runnable): the run delay added by then is taken
// from the held time's end first, and what is left of it was waited in
// the new span. A held stretch whose thread ends or is never read again
// is dropped: it may have been a wait for a CPU.
//
// What that gets wrong: a thread woken from a sleep, caught waiting for a
// CPU at a reading, that then computes and is preempted in the next span
// has those later waits cut from its sleep too (the readings cannot tell
// one wait from several), and the span's own blocked time, if any, is not
// counted (it ran more than a twentieth): its Wait comes out short by
// them. A thread that computes without sleeping, the common case on a
// busy machine, is never counted blocked.
//
// The run delay must be known at both ends of a span: it is read at a
// thread's first reading, after a span in which the thread ran at most
// half the time (where a blocked stretch most often begins) and while time
// is held back. A stretch that begins right at a reading after a busy span
// is sent from its second span.
//
// Why from outside: the Python hook sees a wait only when a known blocking
// C function is called (blocking_calls.h). A pipe read by iteration
// (`for line in f:`; multiprocessing's resource tracker does it all run
// long), a wait inside a native library's own code and a wait for the GIL
// make no such call.
//
// Cost, on the flusher's thread: a clock read per live thread per sample
// (0.4-0.6 us), and for idle and half-idle threads an open/pread/close of
// /proc/self/task/TID/schedstat (4-6 us), and for idle ones of .../stat
// too (8 us): about 14 us per idle thread per sample, 0.07 % of a core
// (scripts/bench/bench_timers on 2-core VMs, scripts/bench/RESULTS.md).
#ifndef RLSCOPE_PRELOAD_THREAD_IDLE_H_
#define RLSCOPE_PRELOAD_THREAD_IDLE_H_

#include <cstdint>

namespace rlscope::preload {

inline constexpr int64_t kIdleSampleIntervalNs = 20'000'000;
inline constexpr int64_t kMinIdleSpanNs = 5'000'000;
inline constexpr int64_t kMaxIdleBusyDivisor = 20;  // Ran for at most a twentieth of the span.
inline constexpr int64_t kPartlyIdleDivisor = 2;    // Ran at most half: the run delay is read too.
// Blocked time shorter than this in a span is not sent: within the clocks'
// and reads' jitter.
inline constexpr int64_t kMinBlockedNs = 1'000'000;

// ParseSchedstatWaitedNs: schedstat's second field (time waited for a CPU,
// the run delay) into *waited_ns; false when the text is not schedstat's.
bool ParseSchedstatWaitedNs(const char* text, int64_t* waited_ns);

// ParseStatRunnable: whether /proc's stat line `text` gives the state R
// (running or waiting for a CPU) into *runnable; false when the text is
// not a stat line. The state follows the last ')': a thread's name may
// hold any character.
bool ParseStatRunnable(const char* text, bool* runnable);

// ThreadCpuNs: the CPU time thread `tid` of this process has run (its
// kernel CPU clock); -1 when it cannot be read (the thread is gone).
int64_t ThreadCpuNs(uint32_t tid);

// ThreadWaitedNs: thread `tid`'s run delay (schedstat); -1 when it cannot
// be read (the thread is gone, no /proc).
int64_t ThreadWaitedNs(uint32_t tid);

// ThreadRunnable: 1 when thread `tid` is running or waiting for a CPU, 0
// when in another state (sleeping, blocked in the kernel, stopped), -1
// when it cannot be read.
int ThreadRunnable(uint32_t tid);

// IdleSample: one thread's last reading and its blocked time held back
// (flusher-owned, in its buffer).
struct IdleSample {
  uint64_t instance = 0;  // The thread instance it belongs to (0: none yet).
  int64_t wall_ns = 0;
  int64_t cpu_ns = -1;
  int64_t waited_ns = -1;     // -1: not read at this sample.
  int64_t held_begin_ns = 0;  // Blocked time held back: [held_begin_ns,
  int64_t held_end_ns = 0;    // held_end_ns), none when empty.
};

// IdleReader: how NextIdleSample reads a thread (ThreadCpuNs,
// ThreadWaitedNs and ThreadRunnable, or a test's stand-ins).
struct IdleReader {
  int64_t (*cpu_ns)(uint32_t tid);
  int64_t (*waited_ns)(uint32_t tid);
  int (*runnable)(uint32_t tid);
};

// BlockedSpan: a span of blocked time to send.
struct BlockedSpan {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// NextIdleSample: reads thread (tid, instance) at wall_ns into `last`;
// writes the blocked spans to send now into out[] (held time released,
// then this span's) and returns how many (0 to 2).
int NextIdleSample(IdleSample& last, uint32_t tid, uint64_t instance, int64_t wall_ns, const IdleReader& reader,
                   BlockedSpan out[2]);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_THREAD_IDLE_H_
