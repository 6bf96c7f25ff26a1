// Breakdown: RL-Scope's overlap model applied to one thread. The thread's
// traced lifetime is partitioned into disjoint pieces, each labelled with
// (operation, resource, category):
//   operation: the innermost open operation, or "(none)";
//   category:  the innermost CPU category, or the thread's base category
//              (Native, or Python for a Python thread) when no event covers it;
//   resource:  CPU (GPU resources arrive with GPU capture).
// The pieces sum exactly to the lifetime: nothing is dropped or counted twice.
#ifndef RLSCOPE_REPORT_BREAKDOWN_H_
#define RLSCOPE_REPORT_BREAKDOWN_H_

#include <cstdint>
#include <map>
#include <tuple>

#include "category.h"
#include "process_timeline.h"

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

// ComputeThreadBreakdown: see the file comment. `none_operation` is the
// NameTable label of "(none)". Takes the thread by value: callers that are
// done with a timeline move it in, and its (large) event lists are then
// flattened in place instead of copied.
Breakdown ComputeThreadBreakdown(ThreadTimeline thread, int32_t none_operation, Category base_category);

// AddInto: sums `part` into `total` (threads into their process).
void AddInto(Breakdown& total, const Breakdown& part);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_BREAKDOWN_H_
