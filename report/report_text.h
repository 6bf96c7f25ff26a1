// report.txt: the human-readable report printed at the end of `rlscope run`
// and by `rlscope report`: per process, time per operation split by stack
// level, then what may make the numbers incomplete.
#ifndef RLSCOPE_REPORT_REPORT_TEXT_H_
#define RLSCOPE_REPORT_REPORT_TEXT_H_

#include <cstdint>
#include <string>

#include "run_report.h"

namespace rlscope::report {

std::string FormatReportText(const RunReport& report);

// FormatDuration: "12.3 s", "45.6 ms", "789 us", "12 ns".
std::string FormatDuration(int64_t ns);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_TEXT_H_
