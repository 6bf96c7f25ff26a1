// LocatedBreakdown: a thread's breakdown (breakdown.h) split one level
// further, by the Python line that caused the time: at each instant inside
// a Python -> native call (NativeCall), the innermost such call's calling
// line ("qualname (file:firstline)" and line); elsewhere no line is known
// (Python time between calls, or a thread without Python). It is the same
// partition as ComputeThreadBreakdown's, so summing over lines gives the
// breakdown back exactly. Used by folded stacks (export_folded.h).
#ifndef RLSCOPE_REPORT_LOCATED_BREAKDOWN_H_
#define RLSCOPE_REPORT_LOCATED_BREAKDOWN_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "report/category.h"
#include "report/process_timeline.h"

namespace rlscope::report {

struct LocatedKey {
  int32_t operation = 0;        // NameTable label.
  int32_t location = kNoLabel;  // NameTable label of "qualname (file:firstline)"; kNoLabel: no line known.
  uint32_t line = 0;
  Resource resource = Resource::kCpu;
  Category category = Category::kNative;

  friend auto operator<=>(const LocatedKey& a, const LocatedKey& b) {
    return std::tie(a.operation, a.location, a.line, a.resource, a.category) <=>
           std::tie(b.operation, b.location, b.line, b.resource, b.category);
  }
  friend bool operator==(const LocatedKey&, const LocatedKey&) = default;
};

using LocatedBreakdown = std::map<LocatedKey, int64_t>;

// ComputeLocatedBreakdown: as ComputeThreadBreakdown (same arguments; the
// `operations` timeline is disjoint, from OperationTimeline), plus the
// thread's native calls (they nest properly).
LocatedBreakdown ComputeLocatedBreakdown(int64_t begin_ns, int64_t end_ns, const IntervalList& operations,
                                         const IntervalList& cpu_events, const std::vector<NativeCall>& native_calls,
                                         int32_t none_operation, Category base_category, bool active_only,
                                         const IntervalList& gpu_busy, const IntervalList* counted = nullptr);

void AddInto(LocatedBreakdown& total, const LocatedBreakdown& part);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_LOCATED_BREAKDOWN_H_
