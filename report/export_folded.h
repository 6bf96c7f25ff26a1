// Folded stacks of a report's CPU-side time (`rlscope export DIR --folded
// FILE`), for flame graphs: Brendan Gregg's flamegraph.pl and speedscope
// both read this format.
//
// One line per (process, operation, category, Python line), sorted:
//
//   PROCESS;OPERATION;CATEGORY;qualname (file:LINE) COUNT
//   PROCESS;OPERATION;CATEGORY COUNT
//
// PROCESS is "NAME (pid N)" (NAME: the base name of argv[0], else of the
// executable); OPERATION as in report.json (innermost NVTX range or
// "(none)"); CATEGORY the stack level ("Python", "Backend", "CUDA API", ...).
// The last frame is the Python line whose call into native code was
// innermost at that time (its function's qualname, file and the calling
// line), for time inside such a call; time where no line is known (Python
// between native calls, threads without Python) stops at CATEGORY. These
// lines are measured, not sampled: the report's python_lines (top lines,
// inclusive, across categories) cannot be split by category, so the split
// comes from a second pass of the breakdown (located_breakdown.h).
// COUNT is nanoseconds of thread time (not samples): the report's thread
// rows (corrected ones when the report is corrected) of resource CPU and
// CPU+GPU added together, so a process's lines sum to its traced thread time
// (report.json's traced_thread_ns). GPU rows (device time) are left out.
// Frames never contain ';' (replaced by ':') nor line breaks (replaced by
// spaces); the count follows the last space.
#ifndef RLSCOPE_REPORT_EXPORT_FOLDED_H_
#define RLSCOPE_REPORT_EXPORT_FOLDED_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "report/run_report.h"

namespace rlscope::report {

// FoldedFrame: `name` made safe as one frame of a folded stack.
std::string FoldedFrame(std::string_view name);

// LineFrame: "qualname (file:LINE)" from a location "qualname
// (file:firstline)" and the calling line ("LOCATION line N" when the
// location has another shape).
std::string LineFrame(std::string_view location, uint32_t line);

// WriteFoldedStacks: from each process's located_rows, so `report` must
// come from LoadRunReport(..., locate_lines = true).
void WriteFoldedStacks(const RunReport& report, std::ostream& out);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_FOLDED_H_
