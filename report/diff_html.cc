#include "report/diff_html.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/diff_format.h"
#include "report/gpu_utilization.h"
#include "report/html_page.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

using html::Cell;
using html::Escape;
using html::Number;
using html::Raw;
using html::Text;
using namespace diff_format;

constexpr size_t kMaxCommandChars = 160;

// Header: per run its value (and share), later runs also ratio and delta.
std::vector<std::string> Header(const RunDiff& diff, std::vector<std::string> first, bool shares) {
  for (size_t i = 0; i < diff.runs.size(); ++i) {
    const std::string& label = diff.runs[i].label;
    first.push_back(label);
    if (shares) first.push_back(label + " share");
    if (i > 0) {
      first.push_back(label + " ratio");
      first.push_back(label + " delta");
    }
  }
  return first;
}

std::vector<Cell> Line(std::vector<Cell> line, const DiffValues& values, const Formatter& format, bool shares) {
  for (const DiffCell& cell : Cells(values, format, shares)) {
    if (cell.verdict == Verdict::kSame) {
      line.push_back(Number(cell.text));
    } else {
      line.push_back(Raw(
          absl::StrCat("<span class=\"", std::string(VerdictName(cell.verdict)), "\">", Escape(cell.text), "</span>"),
          true));
    }
  }
  return line;
}

std::string RunsTable(const RunDiff& diff) {
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < diff.runs.size(); ++i) {
    const DiffRunSummary& run = diff.runs[i];
    const std::string command = html::Truncate(FormatCommandLine(run.command), kMaxCommandChars);
    table.push_back({Text(run.label + (i == 0 ? " (baseline)" : "")), Raw("<code>" + Escape(run.dir) + "</code>"),
                     Raw("<code class=\"command\">" + Escape(command) + "</code>"), Number(absl::StrCat(run.exit_code)),
                     Text(run.corrected ? "corrected" : "NOT corrected"),
                     Text(run.data_damaged ? "damaged" : "complete")});
  }
  return html::Table({"run", "directory", "command", "exit", "overhead", "trace data"}, table);
}

std::string TotalsTable(const RunDiff& diff) {
  std::vector<std::vector<Cell>> table;
  table.push_back(Line({Text("wall time (corrected when corrected)")}, diff.total_wall, Duration, false));
  if (AnyValue(diff.steps)) {
    table.push_back(Line({Text("steps (entries into " + diff.step_operation + ")")}, diff.steps, Count, false));
    if (!diff.per_step) table.push_back(Line({Text("wall time per step")}, diff.wall_per_step, Duration, false));
  }
  table.push_back(Line({Text("thread time (CPU-side rows)")}, diff.thread_time, Duration, false));
  if (AnyValue(diff.gpu_time)) table.push_back(Line({Text("GPU time (GPU rows)")}, diff.gpu_time, Duration, false));
  if (AnyValue(diff.gpu_busy)) {
    table.push_back(Line({Text("GPU busy (some GPU busy)")}, diff.gpu_busy, Duration, false));
    table.push_back(Line({Text("GPU busy fraction (of wall time)")}, diff.gpu_busy_fraction, Fraction, false));
  }
  if (AnyValue(diff.nvidia_smi_mean)) {
    table.push_back(Line({Text("nvidia-smi utilization (mean, busiest GPU)")}, diff.nvidia_smi_mean, Fraction, false));
  }
  std::string out = html::Table(Header(diff, {"total"}, false), table);
  if (!AnyValue(diff.gpu_busy)) out += "<p class=\"note\">GPU busy: no run had GPU capture.</p>";
  return out;
}

// GpuBusyChart: per run, the GPU busy time the trace measured and what
// nvidia-smi sampled, both over the profiled run (the one nvidia-smi saw,
// so the trace's share here is of the profiled wall time, not the
// corrected one); "" when no run has either.
std::string GpuBusyChart(const RunDiff& diff) {
  bool any = false;
  for (const DiffRunSummary& run : diff.runs) any = any || run.gpu_busy_ns.has_value() || run.nvidia_smi_mean;
  if (!any) return "";
  html::BarChart chart;
  chart.description = "GPU busy per run: the trace against nvidia-smi";
  chart.format_value = Fraction;
  auto bar = [](std::string label, std::string series, std::optional<double> value, std::string title) {
    if (!value.has_value()) return html::ChartBar{std::move(label), {}, kAbsent};
    return html::ChartBar{std::move(label), {{std::move(series), *value, std::move(title)}}, ""};
  };
  for (const DiffRunSummary& run : diff.runs) {
    std::optional<double> traced;
    if (run.gpu_busy_ns.has_value() && run.wall_ns > 0) {
      traced = static_cast<double>(*run.gpu_busy_ns) / static_cast<double>(run.wall_ns);
    }
    const std::string gpu = run.nvidia_smi_gpu.has_value() ? absl::StrFormat("GPU %d", *run.nvidia_smi_gpu) : "";
    chart.groups.push_back(
        {run.label,
         {bar("trace", "GPU busy (trace)", traced,
              traced.has_value() ? absl::StrFormat("%s: some GPU busy %s of the profiled %s (%s)", run.label,
                                                   Duration(static_cast<double>(*run.gpu_busy_ns)),
                                                   Duration(static_cast<double>(run.wall_ns)), Fraction(*traced))
                                 : ""),
          bar("smi mean", "nvidia-smi", run.nvidia_smi_mean,
              run.nvidia_smi_mean ? absl::StrFormat("%s: nvidia-smi utilization.gpu mean %s (%s)", run.label,
                                                    Fraction(*run.nvidia_smi_mean), gpu)
                                  : ""),
          bar("smi max", "nvidia-smi", run.nvidia_smi_max,
              run.nvidia_smi_max ? absl::StrFormat("%s: nvidia-smi utilization.gpu max %s (%s)", run.label,
                                                   Fraction(*run.nvidia_smi_max), gpu)
                                 : "")}});
  }
  return html::Legend({"GPU busy (trace)", "nvidia-smi"}) + html::StackedBarChart(chart) +
         html::Note(absl::StrCat("Both over the profiled run. ", kNvidiaSmiCaveat));
}

// Chart: per operation a bar per run (thread time, stacked by CPU-side
// category) and, where some run has GPU rows, a GPU bar per run.
std::string Chart(const RunDiff& diff, size_t shown) {
  html::BarChart chart;
  chart.description = "Time per operation and run, stacked by category";
  chart.format_value = Duration;
  std::vector<std::string> legend;
  auto add_series = [&](const std::string& name) {
    if (std::find(legend.begin(), legend.end(), name) == legend.end()) legend.push_back(name);
  };
  for (size_t k = 0; k < shown; ++k) {
    const DiffOperation& op = diff.operations[k];
    html::ChartGroup group{op.name, {}};
    for (bool gpu : {false, true}) {
      const DiffValues& total = gpu ? op.gpu_time : op.cpu_time;
      if (gpu && !AnyValue(total)) continue;
      for (size_t i = 0; i < diff.runs.size(); ++i) {
        html::ChartBar bar{gpu ? diff.runs[i].label + " GPU" : diff.runs[i].label, {}, ""};
        if (!total.values[i].has_value()) bar.total_text = kAbsent;
        for (const DiffCategory& category : op.categories) {
          if (category.gpu != gpu || !category.time.values[i].has_value()) continue;
          const double ns = *category.time.values[i];
          const std::string series(CategoryName(category.category));
          add_series(series);
          const std::vector<std::optional<double>>& shares = category.time.shares;
          const std::string share = i < shares.size() && shares[i].has_value() ? Fraction(*shares[i]) : kAbsent;
          bar.segments.push_back(
              {series, ns,
               absl::StrFormat("%s \u00b7 %s \u00b7 %s: %s = %.0f ns (%s of its %s)", op.name, diff.runs[i].label,
                               CategoryLabel(category), Duration(ns), ns, share, gpu ? "GPU time" : "thread time")});
        }
        group.bars.push_back(std::move(bar));
      }
    }
    chart.groups.push_back(std::move(group));
  }
  return html::Legend(legend) + html::StackedBarChart(chart);
}

std::string OperationsTable(const RunDiff& diff, size_t shown) {
  std::vector<std::vector<Cell>> table;
  for (size_t k = 0; k < shown; ++k) {
    const DiffOperation& op = diff.operations[k];
    table.push_back(
        Line({Raw("<strong>" + Escape(op.name) + "</strong>"), Text("(all CPU)")}, op.cpu_time, Duration, true));
    for (const DiffCategory& category : op.categories) {
      if (category.gpu) continue;
      table.push_back(Line({Text(""), Text(CategoryLabel(category))}, category.time, Duration, true));
    }
    if (!AnyValue(op.gpu_time)) continue;
    table.push_back(Line({Text(""), Text("(all GPU)")}, op.gpu_time, Duration, true));
    for (const DiffCategory& category : op.categories) {
      if (category.gpu) table.push_back(Line({Text(""), Text(CategoryLabel(category))}, category.time, Duration, true));
    }
  }
  return html::Table(Header(diff, {"operation", "category"}, true), table, "diff");
}

std::string TransitionsTable(const RunDiff& diff, size_t shown) {
  std::vector<std::vector<Cell>> table;
  for (size_t k = 0; k < shown; ++k) {
    const DiffOperation& op = diff.operations[k];
    if (op.transitions.empty()) continue;
    table.push_back(
        Line({Raw("<strong>" + Escape(op.name) + "</strong>"), Text("instances")}, op.instances, Count, false));
    for (const DiffTransition& transition : op.transitions) {
      table.push_back(Line(
          {Text(""), Text(absl::StrFormat("%s\u2192%s", CategoryName(transition.from), CategoryName(transition.to)))},
          transition.per_instance, Rate, false));
    }
  }
  if (table.empty()) return "<p class=\"note\">No run recorded transitions between stack levels.</p>";
  return html::Table(Header(diff, {"operation", "transition"}, false), table, "diff");
}

}  // namespace

std::string FormatDiffHtml(const RunDiff& diff, size_t max_operations) {
  const size_t n = diff.runs.size();
  std::string body = absl::StrFormat(
      "<h1>rlscope diff: %d runs</h1><p>Baseline <strong>%s</strong>; ratio = run / baseline, delta = run \u2212 "
      "baseline, %s = not in that run (never a zero).</p>",
      n, Escape(n > 0 ? diff.runs[0].label : "-"), kAbsent);
  for (const std::string& warning : diff.warnings) {
    body += absl::StrCat("<div class=\"banner warn\">", Escape(warning), "</div>");
  }
  body += "<h2>Runs</h2>" + RunsTable(diff);
  if (diff.per_step) {
    body += absl::StrCat("<p class=\"note\">Times are per step: divided by each run's entries into <code>",
                         Escape(diff.step_operation), "</code>, as ", Escape(diff.per_step_why), ".</p>");
  }
  body += "<h2>Totals</h2>" + TotalsTable(diff);
  const std::string gpu_chart = GpuBusyChart(diff);
  if (!gpu_chart.empty()) body += "<h2>GPU busy: the trace against nvidia-smi</h2>" + gpu_chart;
  const size_t shown = max_operations == 0 ? diff.operations.size() : std::min(max_operations, diff.operations.size());
  const std::string capped =
      shown < diff.operations.size()
          ? absl::StrFormat(
                "<p class=\"note\">Showing the %d operations largest in the baseline of %d (--top 0 shows "
                "all; --format json has all).</p>",
                shown, diff.operations.size())
          : "";
  body += "<h2>Time per operation</h2>";
  body += diff.operations.empty() ? "<p class=\"note\">No run has any operation.</p>" : Chart(diff, shown) + capped;
  body +=
      "<h2>Per operation and category</h2><p class=\"note\">Share: of the run's thread time; GPU rows: of its GPU "
      "time.</p>" +
      OperationsTable(diff, shown) + capped;
  body += "<h2>Transitions per operation instance</h2>" + TransitionsTable(diff, shown);
  std::vector<std::string> labels;
  for (const DiffRunSummary& run : diff.runs) labels.push_back(run.label);
  return html::Page(absl::StrCat("rlscope diff: ", absl::StrJoin(labels, " vs ")), body);
}

}  // namespace rlscope::report
