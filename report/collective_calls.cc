#include "report/collective_calls.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "report/category.h"
#include "report/operation_timeline.h"

namespace rlscope::report {

namespace {

// ClosedSpans: time spans [begin, end], bounds included (a span may be
// empty: a call the correction shrank to nothing), asked in time order
// whether one holds a time.
class ClosedSpans {
 public:
  explicit ClosedSpans(std::vector<std::pair<int64_t, int64_t>> spans) : spans_(std::move(spans)) {
    std::sort(spans_.begin(), spans_.end());
  }
  // Holds: whether a span holds `time_ns`; times asked never decrease.
  bool Holds(int64_t time_ns) {
    for (; next_ < spans_.size() && spans_[next_].first <= time_ns; ++next_) {
      latest_end_ = std::max(latest_end_, spans_[next_].second);
    }
    return time_ns <= latest_end_;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> spans_;
  size_t next_ = 0;
  int64_t latest_end_ = INT64_MIN;
};

// QueuedBegins: the begins of `hooked`'s queued collectives, sorted.
std::vector<int64_t> QueuedBegins(const std::vector<HookedCollective>& hooked) {
  std::vector<int64_t> begins;
  for (const HookedCollective& call : hooked) {
    if (call.queued) begins.push_back(call.begin_ns);
  }
  std::sort(begins.begin(), begins.end());
  return begins;
}

}  // namespace

std::vector<CollectiveCall> CollectiveCallsOf(const std::vector<NativeCall>& calls,
                                              const std::vector<HookedCollective>& hooked,
                                              const IntervalList& operations, int32_t none) {
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
  const std::vector<int64_t> queued = QueuedBegins(hooked);
  for (CollectiveCall& collective : collectives) {
    const auto first = std::lower_bound(queued.begin(), queued.end(), collective.begin_ns);
    collective.queued = first != queued.end() && *first <= collective.end_ns;
  }
  return collectives;
}

std::vector<CollectiveCall> NativeCollectivesOf(const std::vector<HookedCollective>& hooked,
                                                const std::vector<NativeCall>& calls, const IntervalList& operations,
                                                int32_t none) {
  std::vector<std::pair<int64_t, int64_t>> python_level;
  for (const NativeCall& call : calls) {
    if (call.category == Category::kCommunication) python_level.emplace_back(call.begin_ns, call.end_ns);
  }
  ClosedSpans inside_python_level(std::move(python_level));
  std::vector<const HookedCollective*> in_order;
  for (const HookedCollective& call : hooked) in_order.push_back(&call);
  std::stable_sort(in_order.begin(), in_order.end(),
                   [](const HookedCollective* a, const HookedCollective* b) { return a->begin_ns < b->begin_ns; });
  std::vector<CollectiveCall> collectives;
  for (const HookedCollective* call : in_order) {
    if (inside_python_level.Holds(call->begin_ns)) continue;
    collectives.push_back(
        {call->begin_ns, call->end_ns, OperationAt(operations, call->begin_ns, none), true, call->queued});
  }
  return collectives;
}

std::vector<CollectiveCall> WithoutServedCollectives(std::vector<CollectiveCall> collectives) {
  std::stable_sort(collectives.begin(), collectives.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
    return std::make_pair(a.begin_ns, a.native) < std::make_pair(b.begin_ns, b.native);
  });
  std::vector<CollectiveCall> kept;
  kept.reserve(collectives.size());
  int64_t python_level_end = INT64_MIN;  // The latest end of a Python-level one begun so far.
  for (const CollectiveCall& call : collectives) {
    if (!call.native) {
      python_level_end = std::max(python_level_end, call.end_ns);
    } else if (call.begin_ns <= python_level_end) {
      continue;
    }
    kept.push_back(call);
  }
  return kept;
}

}  // namespace rlscope::report
