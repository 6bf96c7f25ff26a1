// ThreadAnalysis: everything the report says about one thread, computed in
// one pass over its timeline:
//   breakdown    time per (operation, resource, category) - breakdown.h
//   transitions  how often each operation crossed from one stack level into
//                another (Python->Backend, Backend->CUDA API, ...), counted
//                where the inner level's interval begins; entering Wait
//                (blocking) is not a transition
//   instances    how many times each operation was entered (the divisor of
//                "transitions per iteration"), and each instance's time
//   lines        Python source lines by the native time they caused
//                (inclusive: nested native calls count in their caller too):
//                the user's own lines, and the library lines beneath
#ifndef RLSCOPE_REPORT_THREAD_ANALYSIS_H_
#define RLSCOPE_REPORT_THREAD_ANALYSIS_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "report/breakdown.h"
#include "report/category.h"
#include "report/collective_calls.h"
#include "report/located_breakdown.h"
#include "report/process_timeline.h"

namespace rlscope::report {

struct TransitionKey {
  int32_t operation = 0;
  Category from = Category::kPython;
  Category to = Category::kNative;
  friend auto operator<=>(const TransitionKey& a, const TransitionKey& b) {
    return std::tie(a.operation, a.from, a.to) <=> std::tie(b.operation, b.from, b.to);
  }
};

struct LineKey {
  int32_t operation = 0;
  int32_t location = 0;  // NameTable label of "qualname (file:firstline)".
  uint32_t line = 0;
  friend auto operator<=>(const LineKey& a, const LineKey& b) {
    return std::tie(a.operation, a.location, a.line) <=> std::tie(b.operation, b.location, b.line);
  }
};

struct LineCost {
  int64_t ns = 0;
  uint64_t calls = 0;
  // Of ns, the calls nested in no other native call of the thread (a
  // callback's calls are inside the call that made it): unlike ns, these
  // never count a stretch of time twice.
  int64_t outer_ns = 0;
};

// A CUDA call CUPTI saw, placed: the operation and Python line (the
// innermost native call around it, if the thread runs Python) it came from.
struct ResolvedLaunch {
  uint32_t correlation_id = 0;
  int64_t time_ns = 0;
  bool nested = false;
  int32_t api = 0;  // NameTable label of the CUDA function.
  int32_t operation = 0;
  int32_t location = kNoLabel;  // NameTable label of "qualname (file:firstline)"; kNoLabel: none.
  uint32_t line = 0;
};

struct ThreadAnalysis {
  // True for a helper thread (no operations of its own, no Python) whose
  // operations were inherited: only its time inside recorded calls counts,
  // since the rest is mostly waiting for work.
  bool active_time_only = false;
  Breakdown breakdown;
  std::map<TransitionKey, uint64_t> transitions;
  std::map<int32_t, uint64_t> instances;  // Operation label -> times entered.
  // Operation label -> each instance's time (instance_durations.h); not in
  // the kBreakdown view.
  std::map<int32_t, std::vector<int64_t>> instance_ns;
  // By the user's own line behind each native call (the innermost frame
  // outside installed packages and the standard library), else the
  // calling line; and by the calling (innermost, often library) line.
  std::map<LineKey, LineCost> lines;
  std::map<LineKey, LineCost> library_lines;
  std::vector<ResolvedLaunch> launches;
  // Its collectives (collective_calls.h), in start order; every view. A
  // process's sum (AddInto) appends its threads' in turn.
  std::vector<CollectiveCall> collectives;
  // The breakdown split by Python line; only with AnalyseThread's
  // `locate_lines` (folded stacks), else empty.
  LocatedBreakdown located;
};

// ThreadViews: what AnalyseThread computes. Every view has the breakdown,
// the instances and the resolved launches (the GPU analysis needs them).
enum class ThreadViews {
  kBreakdown,  // Nothing more: the measured rows beside a corrected report.
  kReport,     // + transitions and lines: what a report shows.
  kLocated,    // + `located`, a second breakdown pass (folded stacks).
};

// AnalyseThread: reads the thread's event lists, leaving them as they are
// (the corrected view reuses them; nothing is copied whole, so a thread's
// analysis needs little more than its flattened events). `none_operation`: the
// NameTable label of "(none)". `inherited_operations` (may be null): the
// operation timeline to use when the thread has no operations of its own
// and does not run Python (see InheritedOperations); inherited operations
// add no instances; the thread's own `inherited_operations`, when set,
// replace them, as its own `gpu_busy` replaces `gpu_busy`. `gpu_busy` (may
// be null): when the process's GPUs were busy (ComputeThreadBreakdown).
ThreadAnalysis AnalyseThread(const ThreadTimeline& thread, int32_t none_operation,
                             const IntervalList* inherited_operations = nullptr, const IntervalList* gpu_busy = nullptr,
                             ThreadViews views = ThreadViews::kReport);

// InheritedOperations: the operation timeline of the process's thread with
// the most operation time (empty if no thread has any). Threads without
// operations of their own take it: a framework's worker threads (torch's
// autograd engine runs CUDA backward passes on one) then count their work
// under the operation that requested it rather than under "(none)".
// `primary`: that thread's index (PrimaryOperationThread), when decided
// already (the corrected view keeps the measured view's choice).
IntervalList InheritedOperations(const std::vector<ThreadTimeline>& threads);
IntervalList InheritedOperations(const std::vector<ThreadTimeline>& threads, int primary);

// PrimaryOperationThread: the index of the thread InheritedOperations
// takes the timeline of; -1 if no thread has any operation.
int PrimaryOperationThread(const std::vector<ThreadTimeline>& threads);

// HasOwnOperations: the thread opened any operation itself.
inline bool HasOwnOperations(const ThreadTimeline& thread) {
  return !thread.operations.empty() || !thread.inferred_operations.empty();
}

// InheritsOperations: the thread takes another's operations (a helper:
// none of its own, no Python, whose idle time is not its own).
inline bool InheritsOperations(const ThreadTimeline& thread) { return !HasOwnOperations(thread) && !thread.python; }

// AddInto: sums a thread's analysis into its process's.
void AddInto(ThreadAnalysis& total, const ThreadAnalysis& part);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_THREAD_ANALYSIS_H_
