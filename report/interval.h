// Interval: a labelled half-open time span [begin_ns, end_ns) on one
// timeline, the unit every analysis in report/ works on.
#ifndef RLSCOPE_REPORT_INTERVAL_H_
#define RLSCOPE_REPORT_INTERVAL_H_

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

namespace rlscope::report {

struct Interval {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  // What the span is: an operation id, a category id, ... (meaning is the
  // owner's). kNoLabel marks "nothing active" in sweep output.
  int32_t label = 0;

  int64_t duration_ns() const { return end_ns - begin_ns; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

inline constexpr int32_t kNoLabel = -1;

using IntervalList = std::vector<Interval>;

// IndexAt: the index of the interval of `intervals` (sorted, disjoint)
// holding `time_ns`, or -1 when none does.
inline int64_t IndexAt(const IntervalList& intervals, int64_t time_ns) {
  const auto after = std::upper_bound(intervals.begin(), intervals.end(), time_ns,
                                      [](int64_t t, const Interval& interval) { return t < interval.begin_ns; });
  if (after == intervals.begin() || time_ns >= std::prev(after)->end_ns) return -1;
  return std::prev(after) - intervals.begin();
}

// Covers: whether some interval of `intervals` (sorted, disjoint) holds `time_ns`.
inline bool Covers(const IntervalList& intervals, int64_t time_ns) { return IndexAt(intervals, time_ns) >= 0; }

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_INTERVAL_H_
