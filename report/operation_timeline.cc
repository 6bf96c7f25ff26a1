#include "report/operation_timeline.h"

#include <algorithm>
#include <array>

#include "report/flatten.h"
#include "report/overlap_sweep.h"

namespace rlscope::report {

IntervalList OperationTimeline(IntervalList explicit_operations, IntervalList inferred_operations) {
  IntervalList explicit_flat = FlattenInnermost(std::move(explicit_operations));
  if (inferred_operations.empty()) return explicit_flat;
  const std::array<IntervalList, 2> streams = {std::move(explicit_flat),
                                               FlattenInnermost(std::move(inferred_operations))};
  IntervalList combined;
  SweepStreams(streams, [&](int64_t begin_ns, int64_t end_ns, std::span<const int32_t> labels) {
    const int32_t label = labels[0] != kNoLabel ? labels[0] : labels[1];
    if (label == kNoLabel) return;
    if (!combined.empty() && combined.back().end_ns == begin_ns && combined.back().label == label) {
      combined.back().end_ns = end_ns;
    } else {
      combined.push_back({begin_ns, end_ns, label});
    }
  });
  return combined;
}

int32_t OperationAt(const IntervalList& timeline, int64_t time_ns, int32_t none) {
  auto it = std::upper_bound(timeline.begin(), timeline.end(), time_ns,
                             [](int64_t time, const Interval& interval) { return time < interval.begin_ns; });
  if (it == timeline.begin()) return none;
  --it;
  return time_ns < it->end_ns ? it->label : none;
}

}  // namespace rlscope::report
