#include "report/idle_waits.h"

#include <algorithm>
#include <vector>

#include "report/category.h"
#include "report/overlap_sweep.h"

namespace rlscope::report {

IntervalList IdleWaits(IntervalList spans, const IntervalList& cpu_events) {
  IntervalList waits;
  if (spans.empty()) return waits;
  spans = UnionIntervals(std::move(spans));
  // Only the events that meet a span matter; a thread's spans are few and
  // its events millions, whose copies (and their fresh pages) once took a
  // fifth of the report's time. Spans are disjoint and sorted, so their
  // ends are sorted too.
  const auto meets_a_span = [&spans](const Interval& event) {
    auto after = std::upper_bound(spans.begin(), spans.end(), event.begin_ns,
                                  [](int64_t time, const Interval& span) { return time < span.end_ns; });
    return after != spans.end() && after->begin_ns < event.end_ns;
  };
  IntervalList covered;
  std::vector<int64_t> bounds;
  for (const Interval& event : cpu_events) {
    if (!meets_a_span(event)) continue;
    if (event.label == static_cast<int32_t>(Category::kPython)) {
      bounds.push_back(event.begin_ns);
      bounds.push_back(event.end_ns);
    } else {
      covered.push_back(event);
    }
  }
  covered = UnionIntervals(std::move(covered));
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  // One piece of [begin, end), cut at the Python intervals' bounds.
  const auto add = [&](int64_t begin, int64_t end) {
    auto bound = std::upper_bound(bounds.begin(), bounds.end(), begin);
    while (begin < end) {
      const int64_t stop = bound != bounds.end() && *bound < end ? *bound++ : end;
      if (stop - begin >= kMinIdleWaitNs) waits.push_back({begin, stop, static_cast<int32_t>(Category::kWait)});
      begin = stop;
    }
  };
  size_t next = 0;  // The first covered interval that may meet the span.
  for (const Interval& span : spans) {
    while (next < covered.size() && covered[next].end_ns <= span.begin_ns) ++next;
    int64_t from = span.begin_ns;
    for (size_t c = next; c < covered.size() && covered[c].begin_ns < span.end_ns; ++c) {
      if (covered[c].begin_ns > from) add(from, covered[c].begin_ns);
      from = std::max(from, covered[c].end_ns);
    }
    if (from < span.end_ns) add(from, span.end_ns);
  }
  return waits;
}

}  // namespace rlscope::report
