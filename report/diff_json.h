// `rlscope diff --format json`: the comparison for tools (schema
// "rlscope.diff/1", documented in README.md "Comparing runs" and in
// `rlscope diff --help`). Extend it, never break it.
#ifndef RLSCOPE_REPORT_DIFF_JSON_H_
#define RLSCOPE_REPORT_DIFF_JSON_H_

#include <string>

#include "report/run_diff.h"

namespace rlscope::report {

inline constexpr const char* kDiffSchema = "rlscope.diff/1";

std::string FormatDiffJson(const RunDiff& diff);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_DIFF_JSON_H_
