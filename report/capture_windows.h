// Capture windows (rlscope run --delay, --duration, --capture-range api,
// --capture-signal): a process whose capture was closed for part of its
// life recorded only operation boundaries then (preload/capture_gate.h).
// Its report describes the windows only: each thread's breakdown counts
// its time inside them, per-instance figures count the instances that
// began inside them, GPU work outside them is left out. The operations
// entered in the whole process stay known (whole_run_instances), so the
// report can say how much of the run the windows saw.
#ifndef RLSCOPE_REPORT_CAPTURE_WINDOWS_H_
#define RLSCOPE_REPORT_CAPTURE_WINDOWS_H_

#include <optional>

#include "report/interval.h"
#include "report/process_timeline.h"

namespace rlscope::report {

// CaptureWindowsOf: the process's captured intervals, from its edges
// (capture open at its start unless the first edge closes it there), within
// [begin_ns, end_ns); nullopt when it has no edges (all captured).
std::optional<IntervalList> CaptureWindowsOf(const ProcessTimeline& process);

// ApplyCaptureWindows: restricts the process to its windows as the file
// comment says; nothing for a process with no edges. After operation
// inference (it filters the instances inference counted).
void ApplyCaptureWindows(ProcessTimeline& process);

// Intersect: the parts of `intervals` (sorted, disjoint) inside `keep`
// (sorted, disjoint); each keeps its label.
IntervalList Intersect(const IntervalList& intervals, const IntervalList& keep);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_CAPTURE_WINDOWS_H_
