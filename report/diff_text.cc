#include "report/diff_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/diff_format.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

using namespace diff_format;
using Table = std::vector<std::vector<std::string>>;

// Display width: UTF-8 code points (the em dash is one column).
size_t Width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

// Aligned columns: the first two left-aligned, the others right-aligned.
std::string Render(const Table& table) {
  std::vector<size_t> widths;
  for (const auto& row : table) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  std::string out;
  for (const auto& row : table) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - Width(row[i]), ' ');
      line += " " + (i < 2 ? row[i] + pad : pad + row[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// Header rows: each run's label over its columns, then the column names.
// Each run has value (and share) columns; later runs also ratio and delta.
void AddHeader(Table& table, const RunDiff& diff, const std::string& first, const std::string& second, bool shares) {
  std::vector<std::string> labels = {"", ""}, names = {first, second};
  for (size_t i = 0; i < diff.runs.size(); ++i) {
    labels.push_back(diff.runs[i].label + (i == 0 ? " (baseline)" : ""));
    names.push_back("value");
    if (shares) {
      labels.push_back("");
      names.push_back("share");
    }
    if (i > 0) {
      labels.insert(labels.end(), {"", ""});
      names.insert(names.end(), {"ratio", "delta"});
    }
  }
  table.push_back(labels);
  table.push_back(names);
}

void AddLine(Table& table, const std::string& first, const std::string& second, const DiffValues& values,
             const Formatter& format, bool shares) {
  std::vector<std::string> line = {first, second};
  for (DiffCell& cell : Cells(values, format, shares)) line.push_back(std::move(cell.text));
  table.push_back(line);
}

}  // namespace

std::string FormatDiffText(const RunDiff& diff, size_t max_operations) {
  std::string out;
  const size_t n = diff.runs.size();
  out += absl::StrFormat(
      "rlscope diff: %d runs, baseline %s; ratio = run / baseline, delta = run - baseline, "
      "%s = not in that run\n",
      n, n > 0 ? diff.runs[0].label : "-", kAbsent);
  for (size_t i = 0; i < n; ++i) {
    const DiffRunSummary& run = diff.runs[i];
    out += absl::StrFormat("  %s%s: %s, %s\n      %s\n", run.label, i == 0 ? " (baseline)" : "", run.dir,
                           run.corrected ? "corrected (times are estimated without rlscope's overhead)"
                                         : "NOT corrected (times include rlscope's overhead)",
                           FormatCommandLine(run.command));
  }
  for (const std::string& warning : diff.warnings) out += "  ! " + warning + "\n";
  if (diff.per_step) {
    out += absl::StrFormat("  times are per step: divided by the run's entries into '%s', as %s\n", diff.step_operation,
                           diff.per_step_why);
  }

  Table totals;
  AddHeader(totals, diff, "total", "", false);
  AddLine(totals, "wall time", "(corrected when corrected)", diff.total_wall, Duration, false);
  if (AnyValue(diff.steps)) {
    AddLine(totals, "steps", absl::StrFormat("(entries into %s)", diff.step_operation), diff.steps, Count, false);
    if (!diff.per_step) AddLine(totals, "wall time per step", "", diff.wall_per_step, Duration, false);
  }
  AddLine(totals, "thread time", "(CPU-side rows)", diff.thread_time, Duration, false);
  if (AnyValue(diff.gpu_time)) AddLine(totals, "GPU time", "(GPU rows)", diff.gpu_time, Duration, false);
  if (AnyValue(diff.gpu_busy)) {
    AddLine(totals, "GPU busy", "(some GPU busy)", diff.gpu_busy, Duration, false);
    AddLine(totals, "GPU busy fraction", "(of wall time)", diff.gpu_busy_fraction, Fraction, false);
  }
  if (AnyValue(diff.nvidia_smi_mean)) {
    AddLine(totals, "nvidia-smi", "(mean, busiest GPU)", diff.nvidia_smi_mean, Fraction, false);
  }
  out += std::string(diff.per_step ? "\ntotals (times per step):\n" : "\ntotals:\n") + Render(totals);

  const size_t shown = max_operations == 0 ? diff.operations.size() : std::min(max_operations, diff.operations.size());
  Table operations;
  AddHeader(operations, diff, "operation", "category", true);
  for (size_t k = 0; k < shown; ++k) {
    const DiffOperation& op = diff.operations[k];
    AddLine(operations, op.name, "(all CPU)", op.cpu_time, Duration, true);
    for (const DiffCategory& category : op.categories) {
      if (!category.gpu) AddLine(operations, "", CategoryLabel(category), category.time, Duration, true);
    }
    if (AnyValue(op.gpu_time)) {
      AddLine(operations, "", "(all GPU)", op.gpu_time, Duration, true);
      for (const DiffCategory& category : op.categories) {
        if (category.gpu) AddLine(operations, "", CategoryLabel(category), category.time, Duration, true);
      }
    }
  }
  out += std::string(diff.per_step ? "\nper operation and category, per step" : "\nper operation and category") +
         " (share: of the run's thread time; GPU rows: of its GPU time):\n" + Render(operations);
  if (shown < diff.operations.size()) {
    out += absl::StrFormat(
        "  (%d more operations, smaller in the baseline: --top 0 shows all, --format json "
        "has all)\n",
        diff.operations.size() - shown);
  }

  Table transitions;
  AddHeader(transitions, diff, "operation", "transition", false);
  bool any_transitions = false;
  for (size_t k = 0; k < shown; ++k) {
    const DiffOperation& op = diff.operations[k];
    if (op.transitions.empty()) continue;
    any_transitions = true;
    AddLine(transitions, op.name, "instances", op.instances, Count, false);
    for (const DiffTransition& transition : op.transitions) {
      AddLine(transitions, "", absl::StrFormat("%s->%s", CategoryName(transition.from), CategoryName(transition.to)),
              transition.per_instance, Rate, false);
    }
  }
  if (any_transitions) out += "\ntransitions per operation instance:\n" + Render(transitions);
  return out;
}

}  // namespace rlscope::report
