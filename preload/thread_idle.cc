#include "preload/thread_idle.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "preload/proc_task_text.h"
#include "preload/thread_cpu_wait.h"

namespace rlscope::preload {

bool ParseSchedstatWaitedNs(const char* text, int64_t* waited_ns) {
  Schedstat stat;
  if (!ParseSchedstat(text, &stat)) return false;
  *waited_ns = stat.waited_ns;
  return true;
}

bool ParseStatRunnable(const char* text, bool* runnable) {
  const char* name_end = strrchr(text, ')');
  if (name_end == nullptr || name_end[1] != ' ' || name_end[2] == '\0') return false;
  *runnable = name_end[2] == 'R';
  return true;
}

int64_t ThreadCpuNs(uint32_t tid) {
  if (tid >= (1u << 28)) return -1;  // Above any pid_max (2^22): its clock id would overflow.
  // The kernel's per-thread CPU clock id, as glibc's pthread_getcpuclockid
  // makes it from a tid: (~tid << 3) | CPUCLOCK_PERTHREAD_MASK (4) |
  // CPUCLOCK_SCHED (2).
  const auto clock = static_cast<clockid_t>((~static_cast<clockid_t>(tid) << 3) | 6);
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return -1;
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t ThreadWaitedNs(uint32_t tid) {
  Schedstat stat;
  return ThreadSchedstat(tid, &stat) ? stat.waited_ns : -1;
}

int ThreadRunnable(uint32_t tid) {
  // The state comes after the pid and the name (at most 15 bytes and its
  // parentheses): well within the first 128 bytes.
  char text[128];
  bool runnable = false;
  if (!ReadTaskText(tid, "stat", text, sizeof(text)) || !ParseStatRunnable(text, &runnable)) return -1;
  return runnable ? 1 : 0;
}

int NextIdleSample(IdleSample& last, uint32_t tid, uint64_t instance, int64_t wall_ns, const IdleReader& reader,
                   BlockedSpan out[2]) {
  const int64_t cpu_ns = reader.cpu_ns(tid);
  const bool continues = instance != 0 && last.instance == instance && last.cpu_ns >= 0 && cpu_ns >= last.cpu_ns;
  const int64_t span_ns = wall_ns - last.wall_ns;
  // Too soon after the last reading to tell: the next one measures from it.
  if (continues && span_ns < kMinIdleSpanNs) return 0;
  const int64_t ran_ns = continues ? cpu_ns - last.cpu_ns : 0;
  const bool held = continues && last.held_end_ns > last.held_begin_ns;
  // The run delay is read at a thread's first reading (once per thread),
  // after spans in which the thread ran at most half the time (a blocked
  // stretch most often begins in one) and while time is held back.
  const bool first = instance != 0 && last.instance != instance && cpu_ns >= 0;
  const bool partly_idle = continues && ran_ns * kPartlyIdleDivisor <= span_ns;
  const int64_t waited_ns = first || partly_idle || held ? reader.waited_ns(tid) : -1;
  const IdleSample previous = last;
  last = {instance, wall_ns, cpu_ns, waited_ns, 0, 0};
  if (!continues || previous.waited_ns < 0 || waited_ns < previous.waited_ns) return 0;  // Held time dropped.

  // The run delay added in this span is of the waits for a CPU that ended
  // in it. Held time ended with the thread runnable: the first of them
  // went on from there, so they are taken from the held time first (a
  // wait that went on into this span then cuts the held time by its part
  // here too, and this span's blocked time, if it is idle, is that much
  // larger: the sum is right; where the span is not idle, the cut stands
  // and the Wait comes out short, thread_idle.h); what is left of them was
  // waited in this span.
  const int64_t added_ns = waited_ns - previous.waited_ns;
  const int64_t off_cpu_ns = std::max<int64_t>(span_ns - ran_ns, 0);
  const int64_t waited_before_ns = held ? std::min(added_ns, previous.held_end_ns - previous.held_begin_ns) : 0;
  const int64_t waited_within_ns = added_ns - waited_before_ns;
  const bool idle = ran_ns * kMaxIdleBusyDivisor <= span_ns;
  const int64_t blocked_ns = idle ? std::max<int64_t>(off_cpu_ns - waited_within_ns, 0) : 0;
  const int runnable = blocked_ns >= kMinBlockedNs ? reader.runnable(tid) : -1;

  int sent = 0;
  // The held time is settled once the thread has got a CPU since (its wait
  // is then in the run delay) or is no longer runnable.
  const bool settled = held && (ran_ns > 0 || added_ns > 0 || runnable == 0);
  if (settled) {
    const int64_t end_ns = previous.held_end_ns - waited_before_ns;
    if (end_ns - previous.held_begin_ns >= kMinBlockedNs) out[sent++] = {previous.held_begin_ns, end_ns};
  }
  if (blocked_ns < kMinBlockedNs) return sent;
  if (runnable != 0) {
    // Runnable now (or unknown): the end may be a wait for a CPU not yet
    // in the run delay. Held, after any held time still unsettled (the
    // thread has not run since: the whole span, which ends at wall_ns).
    const bool unsettled = held && !settled;
    last.held_begin_ns = unsettled ? previous.held_begin_ns : previous.wall_ns;
    last.held_end_ns = unsettled ? previous.held_end_ns + blocked_ns : previous.wall_ns + blocked_ns;
    return sent;
  }
  // Not runnable: blocked now, and the time off the CPU not spent waiting
  // for one was blocked (placed at the span's start: where in it the
  // thread ran is unknown).
  const BlockedSpan span{previous.wall_ns, previous.wall_ns + blocked_ns};
  if (sent > 0 && out[sent - 1].end_ns == span.begin_ns) {
    out[sent - 1].end_ns = span.end_ns;
  } else {
    out[sent++] = span;
  }
  return sent;
}

}  // namespace rlscope::preload
