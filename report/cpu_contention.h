// CpuContention: how much wall time a nanosecond of a thread's CPU work
// cost it where the machine was busy, from the thread's waits for a CPU
// (ThreadTimeline::cpu_waits, preload/thread_cpu_wait.h).
//
// A thread that wants a CPU gets its share of one: in a span where it ran
// `ran` and waited for a CPU `waited` (less kWakeUpWaitNs for each time it
// got one), any of its work, rlscope's hooks' included, took
// 1 + waited/ran times its CPU time in wall time. The
// calibration prices the hooks in CPU time, so the correction scales each
// price by this factor where the cost was paid. Before a reading the
// next one stands for the time: a thread's start-up (loading, its first
// hooks, about 20 ms before its first reading), a capture window's start
// (readings restart with each window) and an exec'd image's start take
// the factor of the span after them, the nearest measure of the thread's
// share (with the program and two busy loops on one CPU, leaving them at
// 1 kept 1.2 % of the wall time in; docs/overhead-correction.md). After
// the last reading (a thread's last moments, a trace from before the
// flusher sent readings) and in a span where the thread ran under
// kMinCpuWaitRanNs the factor is 1; it is capped at kMaxCpuWaitScale.
//
// What it assumes: the thread's waits are in proportion to its CPU use
// across the span. Waits that rlscope's own threads (the flusher, the
// collector) cause are scaled like the rest, though unprofiled they would
// not have happened at all: on a machine without spare CPUs that leaves
// some of rlscope's cost in (about 1.2 % of the wall time with the program
// and two busy loops on one CPU; docs/overhead-correction.md).
#ifndef RLSCOPE_REPORT_CPU_CONTENTION_H_
#define RLSCOPE_REPORT_CPU_CONTENTION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "report/process_timeline.h"

namespace rlscope::report {

// Beyond this a span's figures are more likely a stalled thread's
// artefact than a share of a CPU (an eighth of one).
inline constexpr double kMaxCpuWaitScale = 8.0;
// A span in which the thread ran less than this says too little of its
// share (a thread that woke once to wait): factor 1.
inline constexpr int64_t kMinCpuWaitRanNs = 1'000'000;
// Each time a thread gets a CPU it has waited for it: a thread preempted
// on a busy machine waits whole time slices (a busy loop beside two CPU
// hogs on the 2-core build VM: 3.7 ms a run), and those waits grow with
// its CPU use; a thread woken from a sleep waits to be put on a CPU (0.1-
// 0.3 us a run on that idle VM, 1.5 us beside the hogs, for two threads
// passing a queue item back and forth; more where an idle CPU must leave
// a deep sleep state), which its CPU use does not change. So this much
// per run is not counted.
inline constexpr int64_t kWakeUpWaitNs = 200'000;

class CpuContention {
 public:
  // `waits`: a thread's spans, in time order, not overlapping.
  explicit CpuContention(std::span<const CpuWait> waits);
  // Scale: the factor for a cost paid at `t_ns`: the span's that holds
  // it, else the next span's, else (after the last) 1.
  double Scale(int64_t t_ns) const;
  // Any: whether some span scales costs by more than 1.
  bool Any() const { return any_; }

 private:
  // A span's end and factor; where it begins matters only for the order
  // check, and Scale needs the ends alone (each span reaches back to the
  // previous one's end, or stands for the gap before it).
  struct Span {
    int64_t end_ns;
    double scale;  // 1 where the thread barely ran or did not wait.
  };
  std::vector<Span> spans_;  // In time order, not overlapping.
  bool any_ = false;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_CPU_CONTENTION_H_
