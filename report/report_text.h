// report.txt: the human-readable report printed at the end of `rlscope run`
// and by `rlscope report`: per process, time per operation split by stack
// level, then what may make the numbers incomplete.
#ifndef RLSCOPE_REPORT_REPORT_TEXT_H_
#define RLSCOPE_REPORT_REPORT_TEXT_H_

#include <string>

#include "report/run_report.h"

namespace rlscope::report {

std::string FormatReportText(const RunReport& report);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_TEXT_H_
