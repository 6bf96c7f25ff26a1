#include "thread_analysis.h"

#include <algorithm>
#include <vector>

#include "operation_timeline.h"

namespace rlscope::report {

namespace {

// CountTransitions: for every category interval, the level it was entered
// from (the innermost enclosing interval, or the thread's base level).
void CountTransitions(const IntervalList& recorded, const IntervalList& operations, Category base, int32_t none,
                      std::map<TransitionKey, uint64_t>& transitions) {
  // Outer before inner: by begin, then longer first. Events are mostly
  // recorded in that order already; sort a copy only when they are not.
  const auto outer_first = [](const Interval& a, const Interval& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  };
  IntervalList sorted;
  const IntervalList* events = &recorded;
  if (!std::is_sorted(recorded.begin(), recorded.end(), outer_first)) {
    sorted = recorded;
    std::sort(sorted.begin(), sorted.end(), outer_first);
    events = &sorted;
  }
  // Per operation-timeline position, found by walking forward (events are
  // in time order), not by a binary search per event.
  size_t position = 0;
  std::vector<const Interval*> open;
  for (const Interval& event : *events) {
    while (!open.empty() && open.back()->end_ns <= event.begin_ns) open.pop_back();
    const Category from = open.empty() ? base : static_cast<Category>(open.back()->label);
    const Category to = static_cast<Category>(event.label);
    if (from != to) {
      while (position < operations.size() && operations[position].end_ns <= event.begin_ns) ++position;
      const bool inside = position < operations.size() && operations[position].begin_ns <= event.begin_ns;
      ++transitions[{inside ? operations[position].label : none, from, to}];
    }
    open.push_back(&event);
  }
}

}  // namespace

IntervalList InheritedOperations(const std::vector<ThreadTimeline>& threads) {
  const ThreadTimeline* primary = nullptr;
  int64_t primary_ns = 0;
  for (const ThreadTimeline& thread : threads) {
    int64_t ns = 0;
    for (const IntervalList* list : {&thread.operations, &thread.inferred_operations}) {
      for (const Interval& operation : *list) ns += operation.duration_ns();
    }
    if (ns > primary_ns) {
      primary = &thread;
      primary_ns = ns;
    }
  }
  if (primary == nullptr) return {};
  return OperationTimeline(primary->operations, primary->inferred_operations);
}

ThreadAnalysis AnalyseThread(ThreadTimeline thread, int32_t none_operation,
                             const IntervalList* inherited_operations) {
  ThreadAnalysis analysis;
  const Category base = thread.python ? Category::kPython : Category::kNative;
  IntervalList operations;
  // Only helper threads inherit: a Python thread's idle time is its own.
  const bool inherited = !HasOwnOperations(thread) && !thread.python && inherited_operations != nullptr &&
                         !inherited_operations->empty();
  if (inherited) {
    operations = *inherited_operations;
  } else {
    analysis.instances = std::move(thread.operation_instances);
    operations = OperationTimeline(std::move(thread.operations), std::move(thread.inferred_operations));
  }
  CountTransitions(thread.cpu_events, operations, base, none_operation, analysis.transitions);
  for (const NativeCall& call : thread.native_calls) {
    LineCost& cost = analysis.lines[{OperationAt(operations, call.begin_ns, none_operation), call.location, call.line}];
    cost.ns += call.end_ns - call.begin_ns;
    ++cost.calls;
  }
  analysis.active_time_only = inherited;
  analysis.breakdown = ComputeThreadBreakdown(thread.begin_ns, thread.end_ns, std::move(operations),
                                              std::move(thread.cpu_events), none_operation, base,
                                              analysis.active_time_only);
  return analysis;
}

void AddInto(ThreadAnalysis& total, const ThreadAnalysis& part) {
  AddInto(total.breakdown, part.breakdown);
  for (const auto& [key, count] : part.transitions) total.transitions[key] += count;
  for (const auto& [key, count] : part.instances) total.instances[key] += count;
  for (const auto& [key, cost] : part.lines) {
    total.lines[key].ns += cost.ns;
    total.lines[key].calls += cost.calls;
  }
}

}  // namespace rlscope::report
