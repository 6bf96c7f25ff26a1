// Chrome trace event JSON of decoded timelines (`rlscope export DIR
// --chrome FILE`): the {"traceEvents": [...]} format chrome://tracing and
// ui.perfetto.dev open. Written as a stream, one event per line.
//
//   - one pid per traced process (its real pid; "process_name" metadata:
//     "NAME (pid N)"), one tid per traced thread (its real tid; a reused
//     tid's later instances get synthetic tids from 1000000000 up;
//     "thread_name" metadata);
//   - complete events ("ph": "X") on the thread for operations (cat
//     "operation"; args.inferred true for ones inferred from Python stack
//     rules) and CPU category intervals (cat and name: the category, e.g.
//     "CUDA API", "Backend", "Simulator", "Python" for a callback from
//     native code, "Profiler" for rlscope's own measured time; a
//     Python->native call has args.location "qualname (file:firstline)" and
//     args.line, and is named after its location);
//   - GPU activities as "X" events on one track per (device, stream) of the
//     process (tid 2000000000 + n, named "GPU D stream S"; cat "Kernel",
//     "Memcpy" or "Memset"; args correlation_id, bytes);
//   - flow events from each launching CUDA call (a "s" event on its thread
//     at the call's entry) to its GPU activity (a "f" event, "bp": "e", at
//     the activity's start), where CUPTI saw the launch; "id" numbers the
//     flows from 1, args.correlation_id is CUPTI's id.
//
// Times are as measured (not corrected for rlscope's overhead): "ts" and
// "dur" are microseconds with nanosecond decimals, "ts" counted from the
// earliest process start ("otherData": {"clock_base_ns": N} gives that
// instant on the trace clock, CLOCK_MONOTONIC).
#ifndef RLSCOPE_REPORT_EXPORT_CHROME_H_
#define RLSCOPE_REPORT_EXPORT_CHROME_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/process_timeline.h"

namespace rlscope::report {

// JsonString: `value` as a JSON string literal, quotes included (control
// characters escaped; invalid UTF-8 bytes become U+FFFD).
std::string JsonString(std::string_view value);

// ChromeMicros: nanoseconds as microseconds with 3 decimals ("1234.567").
std::string ChromeMicros(int64_t ns);

void WriteChromeTrace(const std::vector<ProcessTimeline>& processes, const NameTable& names, std::ostream& out);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_CHROME_H_
