#include "report/located_breakdown.h"

#include <algorithm>
#include <utility>

#include "report/breakdown.h"
#include "report/flatten.h"

namespace rlscope::report {

namespace {

// Dense ids for pairs of labels, so a pair can label an Interval.
class PairIds {
 public:
  int32_t Id(int32_t first, int32_t second) {
    auto [it, inserted] = ids_.try_emplace({first, second}, static_cast<int32_t>(pairs_.size()));
    if (inserted) pairs_.push_back({first, second});
    return it->second;
  }
  const std::pair<int32_t, int32_t>& Pair(int32_t id) const { return pairs_[static_cast<size_t>(id)]; }

 private:
  std::map<std::pair<int32_t, int32_t>, int32_t> ids_;
  std::vector<std::pair<int32_t, int32_t>> pairs_;
};

// LabelAt: walks a sorted, disjoint list forward; the label covering
// [time, ...) or kNoLabel.
int32_t LabelAt(const IntervalList& list, size_t& next, int64_t time_ns) {
  while (next < list.size() && list[next].end_ns <= time_ns) ++next;
  return next < list.size() && list[next].begin_ns <= time_ns ? list[next].label : kNoLabel;
}

}  // namespace

LocatedBreakdown ComputeLocatedBreakdown(int64_t begin_ns, int64_t end_ns, const IntervalList& operations,
                                         const IntervalList& cpu_events, const std::vector<NativeCall>& native_calls,
                                         int32_t none_operation, Category base_category, bool active_only,
                                         const IntervalList& gpu_busy, const IntervalList* counted) {
  // The innermost native call at each instant, labelled by its line.
  PairIds lines;  // (location, line)
  IntervalList calls;
  calls.reserve(native_calls.size());
  for (const NativeCall& call : native_calls) {
    // The user's own line where known (folded stacks end at train.py's line, not torch's).
    calls.push_back(
        {call.begin_ns, call.end_ns, lines.Id(call.shown_location(), static_cast<int32_t>(call.shown_line()))});
  }
  const IntervalList innermost = FlattenInnermost(std::move(calls));

  // The operation timeline refined by line: each piece labelled with an
  // (operation, line id) pair, so one breakdown pass keys by both.
  PairIds refined;  // (operation, line id or kNoLabel)
  const int32_t none = refined.Id(none_operation, kNoLabel);
  std::vector<int64_t> bounds;
  bounds.reserve(2 * (operations.size() + innermost.size()));
  for (const IntervalList* list : {&operations, &innermost}) {
    for (const Interval& piece : *list) {
      bounds.push_back(piece.begin_ns);
      bounds.push_back(piece.end_ns);
    }
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  IntervalList pieces;
  size_t next_operation = 0, next_line = 0;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const int32_t operation = LabelAt(operations, next_operation, bounds[i]);
    const int32_t line = LabelAt(innermost, next_line, bounds[i]);
    if (operation == kNoLabel && line == kNoLabel) continue;
    const int32_t label = refined.Id(operation == kNoLabel ? none_operation : operation, line);
    if (!pieces.empty() && pieces.back().end_ns == bounds[i] && pieces.back().label == label) {
      pieces.back().end_ns = bounds[i + 1];
    } else {
      pieces.push_back({bounds[i], bounds[i + 1], label});
    }
  }

  LocatedBreakdown located;
  const Breakdown breakdown = ComputeThreadBreakdown(begin_ns, end_ns, std::move(pieces), cpu_events, none,
                                                     base_category, active_only, gpu_busy, counted);
  for (const auto& [key, ns] : breakdown) {
    const auto& [operation, line_id] = refined.Pair(key.operation);
    LocatedKey located_key{operation, kNoLabel, 0, key.resource, key.category};
    if (line_id != kNoLabel) {
      located_key.location = lines.Pair(line_id).first;
      located_key.line = static_cast<uint32_t>(lines.Pair(line_id).second);
    }
    located[located_key] += ns;
  }
  return located;
}

void AddInto(LocatedBreakdown& total, const LocatedBreakdown& part) {
  for (const auto& [key, ns] : part) total[key] += ns;
}

}  // namespace rlscope::report
