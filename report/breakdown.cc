#include "report/breakdown.h"

#include <array>
#include <utility>
#include <vector>

#include "report/flatten.h"
#include "report/overlap_sweep.h"

namespace rlscope::report {

Breakdown ComputeThreadBreakdown(int64_t begin_ns, int64_t end_ns, IntervalList operations,
                                 const IntervalList& cpu_events, int32_t none_operation, Category base_category,
                                 bool active_only, const IntervalList& gpu_busy, const IntervalList* counted) {
  Breakdown totals;
  IntervalList lifetime = counted != nullptr ? *counted : IntervalList{{begin_ns, end_ns, 0}};
  if (counted != nullptr && !lifetime.empty()) {
    begin_ns = lifetime.front().begin_ns;
    end_ns = lifetime.back().end_ns;
  }
  if (end_ns <= begin_ns || lifetime.empty()) return totals;
  for (Interval& piece : lifetime) piece.label = 0;
  // The GPU stream only where it overlaps the thread (a copy: the sweep
  // takes streams by value).
  IntervalList busy;
  for (const Interval& interval : gpu_busy) {
    if (interval.end_ns > begin_ns && interval.begin_ns < end_ns) busy.push_back(interval);
  }
  // The CPU events are read in place when they do not nest (a sweep's
  // sums do not need touching pieces merged), else flattened into a copy.
  const bool flat = IsFlat(cpu_events);
  const IntervalList flattened = flat ? IntervalList{} : FlattenInnermostOf(cpu_events);
  const std::array<IntervalSpan, 4> streams = {
      lifetime,
      operations,
      flat ? IntervalSpan(cpu_events) : IntervalSpan(flattened),
      busy,
  };
  // Accumulate per segment into a dense (operation x resource x category)
  // table: a map lookup per segment was the analysis's hottest spot.
  constexpr size_t kCategories = static_cast<size_t>(Category::kCount);
  constexpr size_t kCells = 2 * kCategories;  // CPU, CPU+GPU.
  std::vector<int64_t> cpu_ns;
  SweepStreams(streams, [&](int64_t segment_begin_ns, int64_t segment_end_ns, std::span<const int32_t> labels) {
    if (labels[0] == kNoLabel) return;  // Outside the thread's lifetime.
    if (active_only && labels[2] == kNoLabel) return;
    const int32_t operation = labels[1] == kNoLabel ? none_operation : labels[1];
    const int32_t category = labels[2] == kNoLabel ? static_cast<int32_t>(base_category) : labels[2];
    const size_t with_gpu = labels[3] == kNoLabel ? 0 : 1;
    const size_t cell =
        static_cast<size_t>(operation) * kCells + with_gpu * kCategories + static_cast<size_t>(category);
    if (cell >= cpu_ns.size()) cpu_ns.resize((static_cast<size_t>(operation) + 1) * kCells, 0);
    cpu_ns[cell] += segment_end_ns - segment_begin_ns;
  });
  for (size_t cell = 0; cell < cpu_ns.size(); ++cell) {
    if (cpu_ns[cell] == 0) continue;
    const size_t within = cell % kCells;
    const BreakdownKey key{static_cast<int32_t>(cell / kCells),
                           within >= kCategories ? Resource::kCpuGpu : Resource::kCpu,
                           static_cast<Category>(within % kCategories)};
    totals[key] = cpu_ns[cell];
  }
  return totals;
}

void AddInto(Breakdown& total, const Breakdown& part) {
  for (const auto& [key, ns] : part) total[key] += ns;
}

}  // namespace rlscope::report
