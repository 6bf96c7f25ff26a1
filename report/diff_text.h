// `rlscope diff`'s text output: runs side by side for people.
#ifndef RLSCOPE_REPORT_DIFF_TEXT_H_
#define RLSCOPE_REPORT_DIFF_TEXT_H_

#include <cstddef>
#include <string>

#include "report/run_diff.h"

namespace rlscope::report {

// FormatDiffText: the comparison as tables. `max_operations`: operations
// shown (the largest first, see RunDiff::operations); 0 shows all.
std::string FormatDiffText(const RunDiff& diff, size_t max_operations = 20);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_DIFF_TEXT_H_
