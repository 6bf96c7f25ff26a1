#include "preload/thread_idle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace rlscope::preload {

bool ParseSchedstat(const char* text, SchedStat* stat) {
  long long fields[3];
  const char* at = text;
  for (long long& field : fields) {
    char* rest = nullptr;
    field = strtoll(at, &rest, 10);
    if (rest == at || field < 0) return false;
    at = rest;
  }
  stat->busy_ns = static_cast<int64_t>(fields[0]) + static_cast<int64_t>(fields[1]);
  stat->slices = static_cast<int64_t>(fields[2]);
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

SchedStat ThreadSchedStat(uint32_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char text[128];
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  close(fd);
  if (n <= 0) return {};
  text[n] = '\0';
  SchedStat stat;
  return ParseSchedstat(text, &stat) ? stat : SchedStat{};
}

char ParseStatState(const char* text) {
  const char* paren = strrchr(text, ')');
  if (paren == nullptr || paren[1] != ' ' || paren[2] == '\0' || paren[2] == ' ') return 0;
  return paren[2];
}

bool ThreadRunnable(uint32_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // The state comes after the pid and the command (at most 15 bytes and
  // its parentheses); the numbers after it hold no parenthesis.
  char text[128];
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  return ParseStatState(text) == 'R';
}

bool NextIdleSample(IdleSample& last, uint32_t tid, uint64_t instance, int64_t wall_ns, const IdleReader& reader,
                    int64_t* begin_ns, int64_t* end_ns) {
  const int64_t cpu_ns = reader.cpu_ns(tid);
  const bool continues = instance != 0 && last.instance == instance && last.cpu_ns >= 0 && cpu_ns >= 0;
  const int64_t span_ns = wall_ns - last.wall_ns;
  const bool measured = continues && span_ns >= kMinIdleSpanNs && cpu_ns >= last.cpu_ns;
  const bool candidate = measured && (cpu_ns - last.cpu_ns) * kMaxIdleBusyDivisor <= span_ns;
  // Its run delay is read at a thread's first reading (once per thread) and
  // after spans in which the thread ran at most half the time (candidates
  // among them), since a blocked stretch most often begins in one: the next
  // span, if idle, then has its start and is sent.
  const bool first = instance != 0 && last.instance != instance && cpu_ns >= 0;
  const bool partly_idle = measured && (cpu_ns - last.cpu_ns) * kPartlyIdleDivisor <= span_ns;
  const SchedStat sched = first || partly_idle ? reader.sched_stat(tid) : SchedStat{};
  // Never on a CPU in the span and runnable at its end: kept off the CPUs,
  // its wait for one not counted yet (thread_idle.h), not blocked. (One
  // that gets a CPU and blocks between the two reads, microseconds apart,
  // passes for blocked: rare, and a span at most.)
  const bool idle = candidate && last.sched.busy_ns >= 0 && sched.busy_ns >= last.sched.busy_ns &&
                    (sched.busy_ns - last.sched.busy_ns) * kMaxIdleBusyDivisor <= span_ns &&
                    (sched.slices > last.sched.slices || !reader.runnable(tid));
  if (idle) {
    *begin_ns = last.wall_ns;
    *end_ns = wall_ns;
  }
  // The schedstat read here is the next span's start; after a busy span
  // it is not read (the next span, if idle, is then not sent: its start is
  // unknown).
  last = {instance, wall_ns, cpu_ns, sched};
  return idle;
}

}  // namespace rlscope::preload
