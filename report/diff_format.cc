#include "report/diff_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/report_vocabulary.h"

namespace rlscope::report::diff_format {

std::string Duration(double ns) { return FormatDuration(static_cast<int64_t>(std::llround(ns))); }
std::string Count(double n) { return absl::StrFormat("%.0f", n); }
std::string Rate(double n) { return absl::StrFormat("%.2f", n); }
std::string Fraction(double f) { return absl::StrFormat("%.1f%%", 100.0 * f); }

bool AnyValue(const DiffValues& values) {
  return std::any_of(values.values.begin(), values.values.end(), [](const auto& v) { return v.has_value(); });
}

std::string CategoryLabel(const DiffCategory& category) {
  const std::string name(CategoryName(category.category));
  return category.gpu ? "GPU " + name : name;
}

std::vector<DiffCell> Cells(const DiffValues& values, const Formatter& format, bool shares) {
  std::vector<DiffCell> cells;
  for (size_t i = 0; i < values.values.size(); ++i) {
    cells.push_back({values.values[i].has_value() ? format(*values.values[i]) : kAbsent});
    if (shares) {
      const std::optional<double> share = i < values.shares.size() ? values.shares[i] : std::nullopt;
      cells.push_back({share.has_value() ? Fraction(*share) : kAbsent});
    }
    if (i == 0) continue;
    const Change& change = values.changes[i];
    switch (change.status) {
      case ChangeStatus::kNew: cells.insert(cells.end(), {{"new"}, {kAbsent}}); break;
      case ChangeStatus::kGone: cells.insert(cells.end(), {{"gone"}, {kAbsent}}); break;
      case ChangeStatus::kAbsent: cells.insert(cells.end(), {{kAbsent}, {kAbsent}}); break;
      case ChangeStatus::kBoth: {
        const double delta = change.delta.value_or(0);
        std::string ratio = change.ratio.has_value() ? absl::StrFormat("%.2fx", *change.ratio) : kAbsent;
        if (change.verdict != Verdict::kSame) absl::StrAppend(&ratio, " ", std::string(VerdictName(change.verdict)));
        cells.push_back({std::move(ratio), change.verdict});
        cells.push_back({(delta < 0 ? "-" : "+") + format(std::fabs(delta))});
        break;
      }
    }
  }
  return cells;
}

}  // namespace rlscope::report::diff_format
