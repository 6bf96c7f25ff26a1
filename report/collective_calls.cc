#include "report/collective_calls.h"

#include <algorithm>

#include "report/operation_timeline.h"

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

}  // namespace rlscope::report
