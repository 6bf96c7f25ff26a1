// The breakdown figure of report.html: RL-Scope's main figure over
// breakdown rows (per operation a bar per resource CPU / CPU+GPU / GPU,
// stacked by category, hover titles with the exact ns) and the same numbers
// as a table, for the whole run or one process, in the corrected and the
// uncorrected view.
#ifndef RLSCOPE_REPORT_REPORT_HTML_BREAKDOWN_H_
#define RLSCOPE_REPORT_REPORT_HTML_BREAKDOWN_H_

#include <cstddef>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace rlscope::report {

// Views of a corrected report (data-view names and URL hashes).
inline constexpr char kCorrectedView[] = "corrected";
inline constexpr char kUncorrectedView[] = "uncorrected";

// Operations shown per figure; the rest are folded into "(N more operations)".
inline constexpr size_t kMaxHtmlOperations = 15;

// BreakdownViews: the figure of `report.rows` and `report.uncorrected_rows`
// as the two switchable views of a corrected report (the corrected one
// shown without script), or of `report.rows` alone. `pid` != 0: that
// process's rows only.
std::string BreakdownViews(const RunReport& report, int pid = 0);

// IsGpuSide: a GPU row (device time), not thread time.
inline bool IsGpuSide(const BreakdownRow& row) { return row.resource == Resource::kGpu; }

// SumRows: the rows' thread time (CPU and CPU+GPU) and GPU time.
struct RowTotals {
  int64_t cpu_ns = 0, gpu_ns = 0;
};
RowTotals SumRows(const std::vector<BreakdownRow>& rows);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_HTML_BREAKDOWN_H_
