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
  const int64_t index = IndexAt(timeline, time_ns);
  return index >= 0 ? timeline[static_cast<size_t>(index)].label : none;
}

}  // namespace rlscope::report
