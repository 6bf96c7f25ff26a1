#include "preload/thread_cpu_wait.h"

#include <cstdlib>

#include "preload/proc_task_text.h"

namespace rlscope::preload {

bool ParseSchedstat(const char* text, Schedstat* stat) {
  char* rest = nullptr;
  const long long ran = strtoll(text, &rest, 10);
  if (rest == text || ran < 0) return false;
  const char* second = rest;
  const long long waited = strtoll(second, &rest, 10);
  if (rest == second || waited < 0) return false;
  const char* third = rest;
  const long long runs = strtoll(third, &rest, 10);
  *stat = {static_cast<int64_t>(ran), static_cast<int64_t>(waited),
           rest != third && runs > 0 ? static_cast<int64_t>(runs) : 0};
  return true;
}

bool ThreadSchedstat(uint32_t tid, Schedstat* stat) {
  char text[128];
  return ReadTaskText(tid, "schedstat", text, sizeof(text)) && ParseSchedstat(text, stat);
}

bool NextCpuWaitSample(CpuWaitReading& last, uint32_t tid, uint64_t instance, int64_t (*now)(), bool force,
                       SchedstatReader read, CpuWaitSpan* span) {
  const bool continues = instance != 0 && last.instance == instance;
  const int64_t wall_ns = now();
  if (continues && !force && wall_ns - last.wall_ns < kCpuWaitSampleIntervalNs) return false;
  Schedstat stat;
  const bool valid = read(tid, &stat);
  const CpuWaitReading previous = last;
  // A failed reading is remembered too: tried again only when due.
  last = {instance, wall_ns, valid, stat};
  if (!valid || !continues || !previous.valid || wall_ns <= previous.wall_ns || stat.ran_ns < previous.stat.ran_ns ||
      stat.waited_ns < previous.stat.waited_ns || stat.runs < previous.stat.runs) {
    return false;
  }
  *span = {
      previous.wall_ns,
      wall_ns,
      {stat.ran_ns - previous.stat.ran_ns, stat.waited_ns - previous.stat.waited_ns, stat.runs - previous.stat.runs}};
  return true;
}

}  // namespace rlscope::preload
