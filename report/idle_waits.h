// IdleWaits: the Wait a thread's blocked spans give (wire kThreadIdle: the
// time of a sample span in which the flusher saw the thread neither run
// nor wait for a CPU, preload/thread_idle.h). They catch the waits the
// Python hook cannot see as calls: a pipe read by iteration, a wait for
// the GIL.
//
// A span becomes Wait only where the thread was at its base level or in
// Python-level time (interpreter time, and the C calls classified as
// Python); inside any other recorded interval (a native library's call, a
// CUDA call, a wait the hook already saw) it is left alone: that time
// stays the library's, as the breakdown has always counted it, and a wait
// is not counted twice. The Wait pieces are split at every recorded
// boundary they cross, so each nests inside the intervals around it, and
// pieces under kMinIdleWaitNs are dropped.
//
// A blocked span is its sample span's blocked time placed at the sample
// span's start: the readings do not say when in it the thread ran.
#ifndef RLSCOPE_REPORT_IDLE_WAITS_H_
#define RLSCOPE_REPORT_IDLE_WAITS_H_

#include <cstdint>

#include "report/interval.h"

namespace rlscope::report {

inline constexpr int64_t kMinIdleWaitNs = 100'000;

// IdleWaits: `spans` (labels ignored) less what `cpu_events` (label:
// Category) other than Python cover, split at the Python ones' bounds;
// labelled Category::kWait, in time order.
IntervalList IdleWaits(IntervalList spans, const IntervalList& cpu_events);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_IDLE_WAITS_H_
