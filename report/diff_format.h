// DiffFormat: what the `rlscope diff` renderers (diff_text, diff_html) show
// alike: the value formats and, for one quantity across runs, its cells:
// per run its value (and share), later runs also ratio and delta; a side a
// run lacks is an em dash, never a 0.
#ifndef RLSCOPE_REPORT_DIFF_FORMAT_H_
#define RLSCOPE_REPORT_DIFF_FORMAT_H_

#include <functional>
#include <string>
#include <vector>

#include "report/run_diff.h"

namespace rlscope::report::diff_format {

inline constexpr char kAbsent[] = "\u2014";

using Formatter = std::function<std::string(double)>;
std::string Duration(double ns);  // FormatDuration of rounded ns.
std::string Count(double n);      // "12"
std::string Rate(double n);       // "1.50"
std::string Fraction(double f);   // "12.5%"

// AnyValue: whether some run has the quantity.
bool AnyValue(const DiffValues& values);
// CategoryLabel: "Python", "GPU Kernel".
std::string CategoryLabel(const DiffCategory& category);

// A cell of a quantity's line: its text, and the verdict of the change
// it shows (a ratio cell of a judged time; else kSame).
struct DiffCell {
  std::string text;
  Verdict verdict = Verdict::kSame;
};

// Cells: `values` as the table cells after a line's own first columns. A
// ratio judged worse or better reads "1.25x worse" / "0.80x better".
std::vector<DiffCell> Cells(const DiffValues& values, const Formatter& format, bool shares);

}  // namespace rlscope::report::diff_format

#endif  // RLSCOPE_REPORT_DIFF_FORMAT_H_
