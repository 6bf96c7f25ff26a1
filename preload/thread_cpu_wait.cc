#include "preload/thread_cpu_wait.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace rlscope::preload {

bool ParseSchedstat(const char* text, int64_t* ran_ns, int64_t* waited_ns) {
  char* rest = nullptr;
  const long long ran = strtoll(text, &rest, 10);
  if (rest == text || ran < 0) return false;
  const char* second = rest;
  const long long waited = strtoll(second, &rest, 10);
  if (rest == second || waited < 0) return false;
  *ran_ns = static_cast<int64_t>(ran);
  *waited_ns = static_cast<int64_t>(waited);
  return true;
}

bool ThreadSchedstat(uint32_t tid, int64_t* ran_ns, int64_t* waited_ns) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[128];
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  return ParseSchedstat(text, ran_ns, waited_ns);
}

bool NextCpuWaitSample(CpuWaitReading& last, uint32_t tid, uint64_t instance, int64_t wall_ns, bool force,
                       SchedstatReader read, CpuWaitSpan* span) {
  const bool continues = instance != 0 && last.instance == instance;
  if (continues && !force && wall_ns - last.wall_ns < kCpuWaitSampleIntervalNs) return false;
  int64_t ran_ns = 0, waited_ns = 0;
  if (!read(tid, &ran_ns, &waited_ns)) return false;
  const CpuWaitReading previous = last;
  last = {instance, wall_ns, ran_ns, waited_ns};
  if (!continues || wall_ns <= previous.wall_ns || ran_ns < previous.ran_ns || waited_ns < previous.waited_ns) {
    return false;
  }
  *span = {previous.wall_ns, wall_ns, ran_ns - previous.ran_ns, waited_ns - previous.waited_ns};
  return true;
}

}  // namespace rlscope::preload
