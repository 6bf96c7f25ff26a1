#include "report/capture_windows.h"

#include <algorithm>
#include <utility>

namespace rlscope::report {

std::optional<IntervalList> CaptureWindowsOf(const ProcessTimeline& process) {
  if (process.capture_edges.empty()) return std::nullopt;
  IntervalList edges = process.capture_edges;
  // Record order is time order within a stream; streams of an exec chain
  // follow each other. Stable: an edge pair at one instant keeps its order.
  std::stable_sort(edges.begin(), edges.end(),
                   [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  IntervalList windows;
  bool open = true;
  int64_t opened_ns = process.begin_ns;
  for (const Interval& edge : edges) {
    const bool opens = edge.label != 0;
    if (opens == open) continue;
    if (open) {
      if (edge.begin_ns > opened_ns) windows.push_back({opened_ns, edge.begin_ns, 0});
    } else {
      opened_ns = std::max(edge.begin_ns, process.begin_ns);
    }
    open = opens;
  }
  if (open && process.end_ns > opened_ns) windows.push_back({opened_ns, process.end_ns, 0});
  for (Interval& window : windows) {
    window.begin_ns = std::max(window.begin_ns, process.begin_ns);
    window.end_ns = std::min(window.end_ns, process.end_ns);
  }
  std::erase_if(windows, [](const Interval& window) { return window.end_ns <= window.begin_ns; });
  return windows;
}

IntervalList Intersect(const IntervalList& intervals, const IntervalList& keep) {
  IntervalList out;
  size_t k = 0;
  for (const Interval& interval : intervals) {
    while (k < keep.size() && keep[k].end_ns <= interval.begin_ns) ++k;
    for (size_t j = k; j < keep.size() && keep[j].begin_ns < interval.end_ns; ++j) {
      const int64_t begin = std::max(interval.begin_ns, keep[j].begin_ns);
      const int64_t end = std::min(interval.end_ns, keep[j].end_ns);
      if (end > begin) out.push_back({begin, end, interval.label});
    }
  }
  return out;
}

void ApplyCaptureWindows(ProcessTimeline& process) {
  std::optional<IntervalList> windows = CaptureWindowsOf(process);
  if (!windows.has_value()) return;
  for (ThreadTimeline& thread : process.threads) {
    for (const auto& [label, count] : thread.operation_instances) process.whole_run_instances[label] += count;
    thread.captured = Intersect({{thread.begin_ns, thread.end_ns, 0}}, *windows);
    // Per-instance figures are the windows': only instances begun inside
    // are counted (every start stays, so that an instance begun before a
    // window keeps its time there: InstanceDurations' `counted`).
    thread.operation_instances.clear();
    for (const Interval& start : thread.instance_starts) {
      if (Covers(*windows, start.begin_ns)) ++thread.operation_instances[start.label];
    }
  }
  // GPU work that began outside the windows: launched outside them, or
  // still running from before (its launch was not captured).
  std::erase_if(process.gpu_activities,
                [&](const GpuActivity& activity) { return !Covers(*windows, activity.begin_ns); });
  process.captured = std::move(windows);
}

}  // namespace rlscope::report
