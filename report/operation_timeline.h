// OperationTimeline: which operation each instant of a thread belongs to,
// as disjoint intervals. Explicit operations (NVTX ranges, rlscope.operation)
// take precedence: where any is open the innermost explicit one wins;
// elsewhere the innermost inferred one (Python stack rules); elsewhere none.
#ifndef RLSCOPE_REPORT_OPERATION_TIMELINE_H_
#define RLSCOPE_REPORT_OPERATION_TIMELINE_H_

#include <cstdint>

#include "report/interval.h"

namespace rlscope::report {

IntervalList OperationTimeline(IntervalList explicit_operations, IntervalList inferred_operations);

// OperationAt: the label of `timeline` (sorted, disjoint) at `time_ns`, or
// `none` outside every interval.
int32_t OperationAt(const IntervalList& timeline, int64_t time_ns, int32_t none);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_OPERATION_TIMELINE_H_
