// Folded stacks of a report's CPU-side rows (`rlscope export DIR --folded
// FILE`), for flame graphs: Brendan Gregg's flamegraph.pl and speedscope
// both read this format.
//
// One line per (process, operation, category), sorted:
//
//   PROCESS;OPERATION;CATEGORY COUNT
//
// PROCESS is "NAME (pid N)" (NAME: the base name of argv[0], else of the
// executable); OPERATION as in report.json (innermost NVTX range or
// "(none)"); CATEGORY the stack level ("Python", "Backend", "CUDA API", ...).
// COUNT is nanoseconds of thread time (not samples): the report's rows
// (corrected ones when the report is corrected) of resource CPU and CPU+GPU
// added together, so a process's lines sum to its traced thread time
// (report.json's traced_thread_ns). GPU rows (device time) are left out.
// Frames never contain ';' (replaced by ':') nor line breaks (replaced by
// spaces); the count follows the last space.
#ifndef RLSCOPE_REPORT_EXPORT_FOLDED_H_
#define RLSCOPE_REPORT_EXPORT_FOLDED_H_

#include <ostream>
#include <string>
#include <string_view>

#include "run_report.h"

namespace rlscope::report {

// FoldedFrame: `name` made safe as one frame of a folded stack.
std::string FoldedFrame(std::string_view name);

void WriteFoldedStacks(const RunReport& report, std::ostream& out);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_FOLDED_H_
