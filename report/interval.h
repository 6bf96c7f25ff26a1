// Interval: a labelled half-open time span [begin_ns, end_ns) on one
// timeline, the unit every analysis in report/ works on.
#ifndef RLSCOPE_REPORT_INTERVAL_H_
#define RLSCOPE_REPORT_INTERVAL_H_

#include <cstdint>
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

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_INTERVAL_H_
