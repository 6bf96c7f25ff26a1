#include "preload/thread_idle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace rlscope::preload {

bool ParseSchedstatBusyNs(const char* text, int64_t* busy_ns) {
  char* rest = nullptr;
  const long long ran = strtoll(text, &rest, 10);
  if (rest == text || ran < 0) return false;
  const char* second = rest;
  const long long waited = strtoll(second, &rest, 10);
  if (rest == second || waited < 0) return false;
  *busy_ns = static_cast<int64_t>(ran) + static_cast<int64_t>(waited);
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

int64_t ThreadBusyNs(uint32_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  int64_t busy_ns = 0;
  return ParseSchedstatBusyNs(text, &busy_ns) ? busy_ns : -1;
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
  const int64_t busy_ns = first || partly_idle ? reader.busy_ns(tid) : -1;
  const bool idle = candidate && last.busy_ns >= 0 && busy_ns >= last.busy_ns &&
                    (busy_ns - last.busy_ns) * kMaxIdleBusyDivisor <= span_ns;
  if (idle) {
    *begin_ns = last.wall_ns;
    *end_ns = wall_ns;
  }
  // The schedstat read here is the next span's start; after a busy span
  // it is not read (the next span, if idle, is then not sent: its start is
  // unknown).
  last = {instance, wall_ns, cpu_ns, busy_ns};
  return idle;
}

}  // namespace rlscope::preload
