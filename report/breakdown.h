// Breakdown: RL-Scope's overlap model applied to one thread. The thread's
// traced lifetime is partitioned into disjoint pieces, each labelled with
// (operation, resource, category):
//   operation: the operation timeline's (operation_timeline.h), or "(none)";
//   category:  the innermost CPU category, or the thread's base category
//              (Native, or Python for a Python thread) when no event covers it;
//   resource:  CPU+GPU while some GPU of the process was busy (`gpu_busy`),
//              else CPU (RL-Scope's overlap of CPU and GPU time).
// The pieces sum exactly to the lifetime: nothing is dropped or counted twice.
#ifndef RLSCOPE_REPORT_BREAKDOWN_H_
#define RLSCOPE_REPORT_BREAKDOWN_H_

#include <cstdint>
#include <map>
#include <tuple>

#include "report/category.h"
#include "report/process_timeline.h"

namespace rlscope::report {

struct BreakdownKey {
  int32_t operation = 0;  // NameTable label.
  Resource resource = Resource::kCpu;
  Category category = Category::kNative;

  friend auto operator<=>(const BreakdownKey& a, const BreakdownKey& b) {
    return std::tie(a.operation, a.resource, a.category) <=> std::tie(b.operation, b.resource, b.category);
  }
  friend bool operator==(const BreakdownKey&, const BreakdownKey&) = default;
};

using Breakdown = std::map<BreakdownKey, int64_t>;

// ComputeThreadBreakdown: see the file comment. The thread lived over
// [begin_ns, end_ns); `operations` is its operation timeline (disjoint:
// OperationTimeline), `cpu_events` its category intervals as recorded (may
// nest; flattened here into a new list, the thread's own left as it is).
// `none_operation` is the NameTable label of "(none)".
// With `active_only`, only instants covered by a category interval count
// (a helper thread's waiting time is left out). `gpu_busy`: sorted,
// disjoint (UnionIntervals) times any GPU of the process was busy; empty
// without GPU capture.
// `counted` (sorted, disjoint), when given, replaces [begin_ns, end_ns):
// the only time that counts (a capture window's part of the lifetime).
Breakdown ComputeThreadBreakdown(int64_t begin_ns, int64_t end_ns, IntervalList operations,
                                 const IntervalList& cpu_events, int32_t none_operation, Category base_category,
                                 bool active_only = false, const IntervalList& gpu_busy = {},
                                 const IntervalList* counted = nullptr);

// AddInto: sums `part` into `total` (threads into their process).
void AddInto(Breakdown& total, const Breakdown& part);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_BREAKDOWN_H_
