// report.txt: the human-readable report printed at the end of `rlscope run`
// and by `rlscope report`: per process, time per operation split by stack
// level, then what may make the numbers incomplete.
#ifndef RLSCOPE_REPORT_REPORT_TEXT_H_
#define RLSCOPE_REPORT_REPORT_TEXT_H_

#include <string>
#include <string_view>

#include "report/run_report.h"

namespace rlscope::report {

std::string FormatReportText(const RunReport& report);

// FormatJobsText: the report's distributed jobs (job_ranks.h), each its
// ranks side by side; `full_file` names the file holding what the tables
// leave out ("report.json").
std::string FormatJobsText(const RunReport& report, std::string_view full_file);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_TEXT_H_
