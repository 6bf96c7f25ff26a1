// CUPTI activity records -> wire::GpuActivity: the one place that knows
// CUPTI's record layouts. Pure (no CUPTI calls), so unit tests feed it
// records built from the real headers.
#ifndef RLSCOPE_PRELOAD_CUPTI_RECORDS_H_
#define RLSCOPE_PRELOAD_CUPTI_RECORDS_H_

#include <cupti_activity.h>

#include <cstdint>

#include "format/wire_format.h"

namespace rlscope::preload {

// The activity kinds rlscope enables, in enabling order.
inline constexpr CUpti_ActivityKind kCapturedActivityKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_OVERHEAD};

// InternFn: gives a kernel name its string id (StringTable::Intern in the
// preload, a fake in tests).
using InternFn = uint32_t (*)(const char* name);

// ConvertActivity: fills `out` from one record; false for a kind rlscope
// does not keep (the record is then skipped). `offset_ns` is added to every
// timestamp (0 when CUPTI uses rlscope's clock).
bool ConvertActivity(const CUpti_Activity& record, InternFn intern, int64_t offset_ns, wire::GpuActivity* out);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CUPTI_RECORDS_H_
