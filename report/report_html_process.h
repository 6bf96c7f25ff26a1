// The per-process part of report.html: the table of processes, and per
// process its breakdown, threads (with a small bar by category),
// transitions per iteration, top Python lines and GPU figures.
#ifndef RLSCOPE_REPORT_REPORT_HTML_PROCESS_H_
#define RLSCOPE_REPORT_REPORT_HTML_PROCESS_H_

#include <string>
#include <vector>

#include "report/run_report.h"

namespace rlscope::report {

// ProcessTableHtml: one row per process, in the given order (capped).
std::string ProcessTableHtml(const std::vector<const ProcessReport*>& processes);

// JobsSectionHtml: each distributed job's ranks side by side
// (job_ranks.h); "" when the run has none.
std::string JobsSectionHtml(const RunReport& report);

// ProcessSectionHtml: the detailed section of one process of `report`.
std::string ProcessSectionHtml(const RunReport& report, const ProcessReport& process);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_HTML_PROCESS_H_
