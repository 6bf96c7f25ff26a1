#include "breakdown.h"

#include <array>
#include <utility>
#include <vector>

#include "flatten.h"
#include "overlap_sweep.h"

namespace rlscope::report {

Breakdown ComputeThreadBreakdown(int64_t begin_ns, int64_t end_ns, IntervalList operations, IntervalList cpu_events,
                                 int32_t none_operation, Category base_category, bool active_only) {
  Breakdown totals;
  if (end_ns <= begin_ns) return totals;
  const std::array<IntervalList, 3> streams = {
      IntervalList{{begin_ns, end_ns, 0}},
      std::move(operations),
      FlattenInnermost(std::move(cpu_events)),
  };
  // Accumulate per segment into a dense (operation x category) table: a map
  // lookup per segment was the analysis's hottest spot.
  constexpr size_t kCategories = static_cast<size_t>(Category::kCount);
  std::vector<int64_t> cpu_ns;
  SweepStreams(streams, [&](int64_t segment_begin_ns, int64_t segment_end_ns, std::span<const int32_t> labels) {
    if (labels[0] == kNoLabel) return;  // Outside the thread's lifetime.
    if (active_only && labels[2] == kNoLabel) return;
    const int32_t operation = labels[1] == kNoLabel ? none_operation : labels[1];
    const int32_t category = labels[2] == kNoLabel ? static_cast<int32_t>(base_category) : labels[2];
    const size_t cell = static_cast<size_t>(operation) * kCategories + static_cast<size_t>(category);
    if (cell >= cpu_ns.size()) cpu_ns.resize((static_cast<size_t>(operation) + 1) * kCategories, 0);
    cpu_ns[cell] += segment_end_ns - segment_begin_ns;
  });
  for (size_t cell = 0; cell < cpu_ns.size(); ++cell) {
    if (cpu_ns[cell] == 0) continue;
    const BreakdownKey key{static_cast<int32_t>(cell / kCategories), Resource::kCpu,
                           static_cast<Category>(cell % kCategories)};
    totals[key] = cpu_ns[cell];
  }
  return totals;
}

void AddInto(Breakdown& total, const Breakdown& part) {
  for (const auto& [key, ns] : part) total[key] += ns;
}

}  // namespace rlscope::report
