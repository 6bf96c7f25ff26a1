#include "report/collective_calls.h"

#include <algorithm>
#include <cstdint>

#include "report/category.h"
#include "report/operation_timeline.h"
#include "report/overlap_sweep.h"

namespace rlscope::report {

std::vector<CollectiveCall> CollectiveCallsOf(const std::vector<NativeCall>& calls, const IntervalList& operations,
                                              int32_t none) {
  std::vector<CollectiveCall> collectives;
  if (std::none_of(calls.begin(), calls.end(),
                   [](const NativeCall& call) { return call.category == Category::kCommunication; })) {
    return collectives;
  }
  // Top-level calls, in start order (recorded as they return: an outer
  // call after the calls inside it).
  const std::vector<bool> nested = NestedCalls(calls);
  std::vector<const NativeCall*> outer;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!nested[i]) outer.push_back(&calls[i]);
  }
  std::stable_sort(outer.begin(), outer.end(),
                   [](const NativeCall* a, const NativeCall* b) { return a->begin_ns < b->begin_ns; });
  bool open = false;  // The last entry of `collectives` is still growing.
  int32_t open_location = kNoLabel;
  uint32_t open_line = 0;
  for (const NativeCall* call : outer) {
    const bool same_line = call->shown_location() == open_location && call->shown_line() == open_line;
    if (!same_line) open = false;
    if (call->category != Category::kCommunication) continue;
    if (open) {
      collectives.back().end_ns = std::max(collectives.back().end_ns, call->end_ns);
      continue;
    }
    collectives.push_back({call->begin_ns, call->end_ns, OperationAt(operations, call->begin_ns, none)});
    open = true;
    open_location = call->shown_location();
    open_line = call->shown_line();
  }
  return collectives;
}

std::vector<CollectiveCall> NativeCollectivesOf(const IntervalList& cpu_events, const std::vector<NativeCall>& calls,
                                                const IntervalList& operations, int32_t none) {
  std::vector<CollectiveCall> collectives;
  const auto communication = static_cast<int32_t>(Category::kCommunication);
  IntervalList python_level;
  for (const NativeCall& call : calls) {
    if (call.category == Category::kCommunication) python_level.push_back({call.begin_ns, call.end_ns, 0});
  }
  python_level = UnionIntervals(std::move(python_level));
  for (const Interval& event : cpu_events) {
    if (event.label != communication) continue;
    if (Covers(python_level, event.begin_ns)) continue;
    collectives.push_back({event.begin_ns, event.end_ns, OperationAt(operations, event.begin_ns, none), true});
  }
  std::stable_sort(collectives.begin(), collectives.end(),
                   [](const CollectiveCall& a, const CollectiveCall& b) { return a.begin_ns < b.begin_ns; });
  return collectives;
}

std::vector<CollectiveCall> WithoutServedCollectives(std::vector<CollectiveCall> collectives) {
  std::stable_sort(collectives.begin(), collectives.end(),
                   [](const CollectiveCall& a, const CollectiveCall& b) { return a.begin_ns < b.begin_ns; });
  std::vector<CollectiveCall> kept;
  kept.reserve(collectives.size());
  int64_t python_level_end = INT64_MIN;  // The latest end of a Python-level one begun so far.
  for (const CollectiveCall& call : collectives) {
    if (!call.native) {
      python_level_end = std::max(python_level_end, call.end_ns);
    } else if (call.begin_ns < python_level_end) {
      continue;
    }
    kept.push_back(call);
  }
  return kept;
}

}  // namespace rlscope::report
