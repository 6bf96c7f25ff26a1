// `rlscope diff --format html`: runs side by side as one self-contained
// page (html_page.h): the runs, their totals, a chart of each operation's
// time per run stacked by category, and per operation and category the
// time, share, ratio and delta against the baseline; absent sides are an
// em dash, never 0 (run_diff.h).
#ifndef RLSCOPE_REPORT_DIFF_HTML_H_
#define RLSCOPE_REPORT_DIFF_HTML_H_

#include <cstddef>
#include <string>

#include "report/run_diff.h"

namespace rlscope::report {

// FormatDiffHtml: the page. `max_operations`: operations shown in the
// chart and tables (the largest first); 0 shows all.
std::string FormatDiffHtml(const RunDiff& diff, size_t max_operations = 20);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_DIFF_HTML_H_
