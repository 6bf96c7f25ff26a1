#include "report/thread_analysis.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "report/capture_windows.h"
#include "report/flatten.h"
#include "report/instance_durations.h"
#include "report/operation_timeline.h"

namespace rlscope::report {

namespace {

// CountTransitions: for every category interval, the level it was entered
// from (the innermost enclosing interval, or the thread's base level).
void CountTransitions(const IntervalList& recorded, const IntervalList& operations, Category base, int32_t none,
                      std::map<TransitionKey, uint64_t>& transitions) {
  // Outer before inner (OuterFirst). Decoding leaves the events in that
  // order; sort a copy only when a later pass (the correction's moves, an
  // exec chain's merge) upset it.
  IntervalList sorted;
  const IntervalList* events = &recorded;
  if (!std::is_sorted(recorded.begin(), recorded.end(), OuterFirst)) {
    sorted = recorded;
    SortOuterFirst(sorted);
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
    // Blocking is not a crossing into another stack level's work (and a
    // wait holds no other event).
    if (to == Category::kWait) continue;
    if (from != to) {
      while (position < operations.size() && operations[position].end_ns <= event.begin_ns) ++position;
      const bool inside = position < operations.size() && operations[position].begin_ns <= event.begin_ns;
      ++transitions[{inside ? operations[position].label : none, from, to}];
    }
    open.push_back(&event);
  }
}

// ResolveLaunches: each launch's operation and innermost enclosing native
// call (its Python line). Native calls nest properly, so one pass with a
// stack of open calls, in time order, finds them. Both lists are read in
// place when in that order already; otherwise launches are copied and the
// calls visited through a sorted index (a tenth of their size).
std::vector<ResolvedLaunch> ResolveLaunches(const std::vector<GpuLaunchPoint>& recorded_launches,
                                            const IntervalList& operations, const std::vector<NativeCall>& calls,
                                            int32_t none) {
  std::vector<ResolvedLaunch> resolved;
  if (recorded_launches.empty()) return resolved;
  const auto earlier_launch = [](const GpuLaunchPoint& a, const GpuLaunchPoint& b) { return a.time_ns < b.time_ns; };
  std::vector<GpuLaunchPoint> sorted_launches;
  const std::vector<GpuLaunchPoint>* launches = &recorded_launches;
  if (!std::is_sorted(recorded_launches.begin(), recorded_launches.end(), earlier_launch)) {
    sorted_launches = recorded_launches;
    std::stable_sort(sorted_launches.begin(), sorted_launches.end(), earlier_launch);
    launches = &sorted_launches;
  }
  const auto outer_call_first = [](const NativeCall& a, const NativeCall& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  };
  std::vector<uint32_t> order;
  if (!std::is_sorted(calls.begin(), calls.end(), outer_call_first)) {
    order.resize(calls.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&calls, &outer_call_first](uint32_t a, uint32_t b) {
      return outer_call_first(calls[a], calls[b]);
    });
  }
  const auto call_at = [&calls, &order](size_t i) -> const NativeCall& {
    return order.empty() ? calls[i] : calls[order[i]];
  };
  resolved.reserve(launches->size());
  std::vector<const NativeCall*> open;
  size_t next_call = 0;
  // A nested driver call stands for the call around it: the latest timed
  // call that began before it on this thread (calls of one thread do not
  // overlap).
  int32_t enclosing_api = 0;
  for (const GpuLaunchPoint& launch : *launches) {
    while (next_call < calls.size() && call_at(next_call).begin_ns <= launch.time_ns) {
      const NativeCall& call = call_at(next_call++);
      while (!open.empty() && open.back()->end_ns <= call.begin_ns) open.pop_back();
      open.push_back(&call);
    }
    while (!open.empty() && open.back()->end_ns < launch.time_ns) open.pop_back();
    if (!launch.nested) enclosing_api = launch.api;
    // An owner decided on the measured timeline stands (overhead_correction.h).
    int32_t operation = launch.operation;
    if (operation == kOperationUndecided) {
      operation = OperationAt(operations, launch.time_ns, none);
    } else if (operation == kNoLabel) {
      operation = none;
    }
    ResolvedLaunch entry{launch.correlation_id, launch.time_ns, launch.nested,
                         launch.nested && enclosing_api != 0 ? enclosing_api : launch.api, operation};
    if (!open.empty()) {
      entry.location = open.back()->shown_location();
      entry.line = open.back()->shown_line();
    }
    resolved.push_back(entry);
  }
  return resolved;
}

// CountLines: each native call's time by the line behind it, in the
// operation it began in: the user's own line (else the calling one) and
// the calling line itself.
void CountLines(const std::vector<NativeCall>& calls, const IntervalList& operations, int32_t none_operation,
                ThreadAnalysis& analysis) {
  const std::vector<bool> nested = NestedCalls(calls);
  for (size_t i = 0; i < calls.size(); ++i) {
    const NativeCall& call = calls[i];
    const int32_t operation = OperationAt(operations, call.begin_ns, none_operation);
    const int64_t ns = call.end_ns - call.begin_ns;
    const int64_t outer_ns = nested[i] ? 0 : ns;
    LineCost& cost = analysis.lines[{operation, call.shown_location(), call.shown_line()}];
    cost.ns += ns;
    cost.outer_ns += outer_ns;
    ++cost.calls;
    LineCost& library = analysis.library_lines[{operation, call.location, call.line}];
    library.ns += ns;
    library.outer_ns += outer_ns;
    ++library.calls;
  }
}

}  // namespace

int PrimaryOperationThread(const std::vector<ThreadTimeline>& threads) {
  int primary = -1;
  int64_t primary_ns = 0;
  for (size_t i = 0; i < threads.size(); ++i) {
    int64_t ns = 0;
    for (const IntervalList* list : {&threads[i].operations, &threads[i].inferred_operations}) {
      for (const Interval& operation : *list) ns += operation.duration_ns();
    }
    if (ns > primary_ns) {
      primary = static_cast<int>(i);
      primary_ns = ns;
    }
  }
  return primary;
}

IntervalList InheritedOperations(const std::vector<ThreadTimeline>& threads, int primary) {
  if (primary < 0 || static_cast<size_t>(primary) >= threads.size()) return {};
  const ThreadTimeline& thread = threads[static_cast<size_t>(primary)];
  return OperationTimeline(thread.operations, thread.inferred_operations);
}

IntervalList InheritedOperations(const std::vector<ThreadTimeline>& threads) {
  return InheritedOperations(threads, PrimaryOperationThread(threads));
}

ThreadAnalysis AnalyseThread(const ThreadTimeline& thread, int32_t none_operation,
                             const IntervalList* inherited_operations, const IntervalList* gpu_busy,
                             ThreadViews views) {
  ThreadAnalysis analysis;
  const Category base = thread.python ? Category::kPython : Category::kNative;
  IntervalList operations;
  // Only helper threads inherit: a Python thread's idle time is its own.
  // The correction's copy, when it made one, keeps the measured owners.
  const bool given = inherited_operations != nullptr && !inherited_operations->empty();
  const bool inherited = InheritsOperations(thread) && (thread.inherited_operations.has_value() || given);
  if (inherited) {
    operations = thread.inherited_operations ? *thread.inherited_operations : *inherited_operations;
  } else {
    analysis.instances = thread.operation_instances;
    operations = OperationTimeline(thread.operations, thread.inferred_operations);
    if (views != ThreadViews::kBreakdown) {
      // Inside capture windows only: outside them the operations are known
      // but nothing else is (capture_windows.h).
      analysis.instance_ns = InstanceDurations(thread.captured ? Intersect(operations, *thread.captured) : operations,
                                               thread.instance_starts, thread.captured ? &*thread.captured : nullptr);
    }
  }
  // The correction's copy, when it made one, keeps the measured overlap.
  if (thread.gpu_busy) gpu_busy = &*thread.gpu_busy;
  if (views != ThreadViews::kBreakdown) {
    CountTransitions(thread.cpu_events, operations, base, none_operation, analysis.transitions);
    CountLines(thread.native_calls, operations, none_operation, analysis);
  }
  if (views == ThreadViews::kLocated) {
    analysis.located = ComputeLocatedBreakdown(
        thread.begin_ns, thread.end_ns, operations, thread.cpu_events, thread.native_calls, none_operation, base,
        inherited, gpu_busy != nullptr ? *gpu_busy : IntervalList{}, thread.captured ? &*thread.captured : nullptr);
  }
  analysis.collectives = CollectiveCallsOf(thread.native_calls, thread.hooked_collectives, operations, none_operation);
  for (const CollectiveCall& call :
       NativeCollectivesOf(thread.hooked_collectives, thread.native_calls, operations, none_operation)) {
    analysis.collectives.push_back(call);
  }
  analysis.launches = ResolveLaunches(thread.gpu_launches, operations, thread.native_calls, none_operation);
  analysis.active_time_only = inherited;
  analysis.breakdown =
      ComputeThreadBreakdown(thread.begin_ns, thread.end_ns, std::move(operations), thread.cpu_events, none_operation,
                             base, analysis.active_time_only, gpu_busy != nullptr ? *gpu_busy : IntervalList{},
                             thread.captured ? &*thread.captured : nullptr);
  return analysis;
}

void AddInto(ThreadAnalysis& total, const ThreadAnalysis& part) {
  AddInto(total.breakdown, part.breakdown);
  for (const auto& [key, count] : part.transitions) total.transitions[key] += count;
  for (const auto& [key, count] : part.instances) total.instances[key] += count;
  for (const auto& [key, durations] : part.instance_ns) {
    std::vector<int64_t>& into = total.instance_ns[key];
    into.insert(into.end(), durations.begin(), durations.end());
  }
  total.launches.insert(total.launches.end(), part.launches.begin(), part.launches.end());
  total.collectives.insert(total.collectives.end(), part.collectives.begin(), part.collectives.end());
  AddInto(total.located, part.located);
  for (const auto& [key, cost] : part.lines) {
    total.lines[key].ns += cost.ns;
    total.lines[key].calls += cost.calls;
    total.lines[key].outer_ns += cost.outer_ns;
  }
  for (const auto& [key, cost] : part.library_lines) {
    total.library_lines[key].ns += cost.ns;
    total.library_lines[key].calls += cost.calls;
    total.library_lines[key].outer_ns += cost.outer_ns;
  }
}

}  // namespace rlscope::report
