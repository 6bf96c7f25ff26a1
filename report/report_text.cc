#include "report/report_text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration/calibration_verdict.h"
#include "calibration/overhead_model.h"
#include "report/bytecode_slowdown_caveat.h"
#include "report/headline.h"
#include "report/python_hook_check.h"
#include "report/report_tables.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

constexpr size_t kMaxOperationsShown = 15;

// Table: left-aligned first column (and last, when `left_last`), the
// others right-aligned.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows, bool left_last = false) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - row[i].size(), ' ');
      const bool left = i == 0 || (left_last && i + 1 == row.size());
      line += i == 0 ? row[i] + pad : (left ? "  " + row[i] + pad : "  " + pad + row[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// Wrapped: `text` in lines of at most 78 columns (a longer word stands
// alone), the first led by `bullet`, the others indented as deep.
std::string Wrapped(const std::string& bullet, const std::string& text) {
  std::string out;
  std::string line = bullet;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(' ', begin);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(begin, end - begin);
    if (word.empty()) {  // Runs of spaces wrap as one.
      begin = end + 1;
      continue;
    }
    if (line.size() > bullet.size() && line.size() + 1 + word.size() > 78) {
      out += line + "\n";
      line = std::string(bullet.size(), ' ');
    }
    if (line.size() > bullet.size()) line += ' ';
    line += word;
    begin = end + 1;
  }
  return out + line + "\n";
}

std::string ProcessTable(const ProcessReport& process, const std::vector<BreakdownRow>& rows) {
  // operation -> category -> ns, operations ordered by total time.
  std::map<std::string, std::map<std::string, int64_t>> cells;
  std::map<std::string, int64_t> operation_totals;
  std::set<std::string> column_set;
  for (const BreakdownRow& row : rows) {
    // CPU-side time only (GPU rows have their own section); a column per
    // category, CPU and CPU+GPU merged (report.json keeps them apart).
    if (row.resource == Resource::kGpu) continue;
    const std::string column(CategoryName(row.category));
    cells[row.operation][column] += row.ns;
    operation_totals[row.operation] += row.ns;
    column_set.insert(column);
  }
  std::vector<std::string> operations;
  for (const auto& [operation, ns] : operation_totals) operations.push_back(operation);
  std::stable_sort(operations.begin(), operations.end(), [&](const std::string& a, const std::string& b) {
    return operation_totals[a] > operation_totals[b];
  });
  // Libraries can open thousands of distinct ranges (XLA names one per
  // compiler pass): the table shows the largest, report.json has them all.
  if (operations.size() > kMaxOperationsShown) {
    const std::string folded = absl::StrFormat("(%d more operations)", operations.size() - kMaxOperationsShown);
    for (size_t i = kMaxOperationsShown; i < operations.size(); ++i) {
      for (const auto& [column, ns] : cells[operations[i]]) cells[folded][column] += ns;
      operation_totals[folded] += operation_totals[operations[i]];
    }
    operations.resize(kMaxOperationsShown);
    operations.push_back(folded);
  }
  const std::vector<std::string> columns(column_set.begin(), column_set.end());
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {"operation", "time", "share"};
  header.insert(header.end(), columns.begin(), columns.end());
  table.push_back(header);
  const int64_t whole = process.traced_thread_ns;
  std::map<std::string, int64_t> column_totals;
  for (const std::string& operation : operations) {
    std::vector<std::string> line = {operation, FormatDuration(operation_totals[operation]),
                                     FormatPercent(operation_totals[operation], whole)};
    for (const std::string& column : columns) {
      const auto it = cells[operation].find(column);
      const int64_t ns = it == cells[operation].end() ? 0 : it->second;
      column_totals[column] += ns;
      line.push_back(ns > 0 ? absl::StrFormat("%s %s", FormatDuration(ns), FormatPercent(ns, whole)) : "-");
    }
    table.push_back(line);
  }
  std::vector<std::string> total_line = {"(all)", FormatDuration(whole), FormatPercent(whole, whole)};
  for (const std::string& column : columns) {
    total_line.push_back(
        absl::StrFormat("%s %s", FormatDuration(column_totals[column]), FormatPercent(column_totals[column], whole)));
  }
  table.push_back(total_line);
  return FormatTable(table);
}

// TransitionTable: per operation, how many times per instance it crossed
// between levels (RL-Scope's "language transitions" per iteration).
std::string TransitionTable(const ProcessReport& process) {
  if (process.transitions.empty()) return "";
  CellTable cells = TransitionCells(process, "->", kMaxOperationsShown);
  std::vector<std::vector<std::string>> table = {std::move(cells.header)};
  for (std::vector<std::string>& row : cells.rows) table.push_back(std::move(row));
  return "  transitions per operation instance:\n" + FormatTable(table);
}

// WholeRunEstimate: for a windowed run, each operation's whole-run time
// estimated from the windows (RunReport::whole_run_estimate).
std::string WholeRunEstimate(const RunReport& report) {
  if (report.whole_run_estimate.empty()) return "";
  std::vector<std::vector<std::string>> table = {
      {"operation", "in the windows", "instances", "per instance", "run instances", "whole run (est.)"}};
  for (const RunReport::Estimate& estimate : report.whole_run_estimate) {
    const auto instances = static_cast<int64_t>(estimate.window_instances);
    table.push_back({estimate.operation, FormatDuration(estimate.window_ns), FormatCount(estimate.window_instances),
                     FormatDuration(estimate.window_ns / instances), FormatCount(estimate.run_instances),
                     FormatDuration(estimate.estimated_ns)});
  }
  // By level, over the estimated operations: each operation's window mix
  // of levels scaled by its instances (RunReport::Estimate).
  std::map<Category, int64_t> by_level;
  int64_t total = 0;
  for (const RunReport::Estimate& estimate : report.whole_run_estimate) {
    for (const auto& [level, ns] : estimate.estimated_ns_by_level) {
      by_level[level] += ns;
      total += ns;
    }
  }
  const std::vector<std::pair<Category, int64_t>> levels = LevelsLargestFirst(by_level);
  std::string level_line = "  by level:";
  for (size_t i = 0; i < levels.size(); ++i) {
    level_line += absl::StrFormat("%s %s %s (%.0f%%)", i == 0 ? "" : ",", CategoryName(levels[i].first),
                                  FormatDuration(levels[i].second),
                                  total > 0 ? 100.0 * static_cast<double>(levels[i].second) / total : 0.0);
  }
  return "\nthe whole run, estimated from the capture windows (CPU thread time per instance x the run's "
         "instances):\n" +
         FormatTable(table) + (levels.empty() ? "" : level_line + "\n");
}

// InstanceTable: per operation with instances, how long one took; per
// step: the operation's time divided by the run's environment steps.
std::string InstanceTable(const ProcessReport& process, uint64_t steps) {
  if (process.instance_stats.empty()) return "";
  CellTable cells = InstanceCells(process, steps, kMaxOperationsShown);
  std::vector<std::vector<std::string>> table = {std::move(cells.header)};
  for (std::vector<std::string>& row : cells.rows) table.push_back(std::move(row));
  return absl::StrFormat("  operation instances (the time one took in its operation%s):\n",
                         steps > 0 ? absl::StrFormat("; per step: of %s environment steps", FormatCount(steps)) : "") +
         FormatTable(table);
}

// LineTable: the Python lines whose native calls took the most time.
std::string LineTable(const ProcessReport& process) {
  if (process.python_lines.empty()) return "";
  std::vector<LineRow> lines = process.python_lines;
  // By outer_ns: a callback's native calls inside a line's call are that
  // line's time once, not again (inclusive ns would add up past the run).
  std::sort(lines.begin(), lines.end(), [](const LineRow& a, const LineRow& b) { return a.outer_ns > b.outer_ns; });
  std::vector<std::vector<std::string>> table = {{"operation", "native time", "calls", "where"}};
  for (size_t i = 0; i < lines.size() && i < 8 && lines[i].outer_ns > 0; ++i) {
    table.push_back(
        {lines[i].operation, FormatDuration(lines[i].outer_ns), absl::StrCat(lines[i].calls), FormatLine(lines[i])});
  }
  return "  Python lines by the native time they caused (your code's lines; library lines in report.json):\n" +
         FormatTable(table, /*left_last=*/true);
}

// UnmatchedSection: when a notable share of the process's time is in no
// operation, the functions it was spent under and the rule lines that
// would name them (unmatched_functions.h).
std::string UnmatchedSection(const ProcessReport& process) {
  constexpr double kShownFromShare = 0.05;
  const UnmatchedTime& unmatched = process.unmatched;
  if (unmatched.thread_ns <= 0 || unmatched.none_ns < kShownFromShare * static_cast<double>(unmatched.thread_ns)) {
    return "";
  }
  std::string out =
      absl::StrFormat("  (none): %s, %.0f%% of thread time, is in no operation.", FormatDuration(unmatched.none_ns),
                      100.0 * static_cast<double>(unmatched.none_ns) / unmatched.thread_ns);
  if (unmatched.functions.empty()) {
    return out +
           " No native call was made in it (Python time alone): name its phases with "
           "`with rlscope.operation(\"NAME\"):`.\n";
  }
  out += " Native time in it, by function:\n";
  std::vector<std::string> rules;
  for (const UnmatchedFunction& function : unmatched.functions) {
    out += absl::StrFormat("    %10s  %s  (%s)%s\n", FormatDuration(function.ns), function.function, function.file,
                           function.rule.empty() ? "  top-level code: wrap its phases in "
                                                   "`with rlscope.operation(\"NAME\"):`"
                                                 : "");
    if (!function.rule.empty()) rules.push_back(function.rule);
  }
  if (!rules.empty()) {
    out +=
        "  To name them, put these lines in a file (OPERATION: simulation, inference, backprop, replay or a "
        "name of your own) and run again with --rules FILE:\n";
    for (const std::string& rule : rules) out += "    " + rule + "\n";
  }
  return out;
}

// WaitSection: the process's blocked thread time (category Wait), which
// the operation table leaves out, and the threads that waited most.
std::string WaitSection(const ProcessReport& process) {
  if (process.wait_ns <= 0) return "";
  std::vector<std::pair<int64_t, const ThreadReport*>> waits;
  for (const ThreadReport& thread : process.threads) {
    int64_t ns = 0;
    for (const BreakdownRow& row : thread.rows) {
      if (row.category == Category::kWait) ns += row.ns;
    }
    if (ns > 0) waits.emplace_back(ns, &thread);
  }
  std::stable_sort(waits.begin(), waits.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = absl::StrFormat(
      "  Wait: threads blocked %s (locks, queues, Event.wait, sleep, select/poll, sockets, pipe reads, waitpid); "
      "not work, in no operation above\n",
      FormatDuration(process.wait_ns));
  for (size_t i = 0; i < waits.size() && i < 5; ++i) {
    const ThreadReport& thread = *waits[i].second;
    out += absl::StrFormat("    thread %d%s: Wait %s of its %s\n", thread.tid,
                           thread.name.empty() ? "" : absl::StrCat(" (", thread.name, ")"),
                           FormatDuration(waits[i].first), FormatDuration(thread.end_ns - thread.begin_ns));
  }
  if (waits.size() > 5) out += absl::StrFormat("    (%d more threads)\n", waits.size() - 5);
  return out;
}

// ShortKernelName: a demangled kernel name without its template arguments
// and parameters ("void at::native::elementwise_kernel<...>(...)" ->
// "at::native::elementwise_kernel"), for the text table.
std::string ShortKernelName(const std::string& name) {
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '<' || c == '(') ++depth;
    if (depth == 0) out += c;
    if ((c == '>' || c == ')') && depth > 0) --depth;
  }
  if (out.rfind("void ", 0) == 0) out = out.substr(5);
  if (out.empty()) out = name;
  return out.size() > 60 ? out.substr(0, 57) + "..." : out;
}

// GpuSection: the GPU level of one process: capture state, busy time, and
// per operation the GPU-busy fraction (overlap) and the kernels it launched.
std::string GpuSection(const ProcessReport& process) {
  const GpuAnalysis& gpu = process.gpu;
  if (gpu.status == "unused" || gpu.status.empty()) return "";
  std::string out;
  if (gpu.status != "captured") {
    out += absl::StrFormat("  GPU level %s: %s\n", gpu.status, gpu.message);
    if (gpu.kernels + gpu.memcpys + gpu.memsets == 0) return out;
  }
  const int64_t lifetime = process.end_ns - process.begin_ns;
  out += absl::StrFormat(
      "  GPU: %d device(s) busy %s (%s of the process's %s); %d kernels (%s), %d copies (%s), %d memsets (%s)\n",
      gpu.devices, FormatDuration(gpu.busy_ns), FormatPercent(gpu.busy_ns, lifetime), FormatDuration(lifetime),
      gpu.kernels, FormatDuration(gpu.kernel_ns), gpu.memcpys, FormatDuration(gpu.memcpy_ns), gpu.memsets,
      FormatDuration(gpu.memset_ns));
  std::vector<OperationGpuRow> operations = gpu.operations;
  std::sort(operations.begin(), operations.end(),
            [](const OperationGpuRow& a, const OperationGpuRow& b) { return a.wall_ns > b.wall_ns; });
  if (!operations.empty()) {
    std::vector<std::vector<std::string>> table = {
        {"operation", "wall time", "GPU busy", "kernels launched", "their GPU time"}};
    for (size_t i = 0; i < operations.size() && i < kMaxOperationsShown; ++i) {
      const OperationGpuRow& row = operations[i];
      // Operations off the main timeline (launches in "(none)", on helper
      // threads) have no wall time of their own there.
      table.push_back({row.operation, row.wall_ns > 0 ? FormatDuration(row.wall_ns) : "-",
                       FormatPercent(std::llround(row.gpu_busy_fraction * 1e6), row.wall_ns > 0 ? 1000000 : 0),
                       absl::StrCat(row.kernels), FormatDuration(row.kernel_ns)});
    }
    out += FormatTable(table);
  }
  std::vector<GpuKernelRow> kernels = gpu.kernels_by_launch;
  std::sort(kernels.begin(), kernels.end(), [](const GpuKernelRow& a, const GpuKernelRow& b) { return a.ns > b.ns; });
  if (!kernels.empty()) {
    std::vector<std::vector<std::string>> table = {{"operation", "GPU time", "kernels", "kernel"}};
    for (size_t i = 0; i < kernels.size() && i < 5; ++i) {
      table.push_back({kernels[i].operation, FormatDuration(kernels[i].ns), absl::StrCat(kernels[i].count),
                       ShortKernelName(kernels[i].kernel)});
    }
    out += "  top kernels, by the operation that launched them:\n" + FormatTable(table, /*left_last=*/true);
  }
  std::vector<GpuLineRow> lines = gpu.lines;
  std::sort(lines.begin(), lines.end(), [](const GpuLineRow& a, const GpuLineRow& b) { return a.ns > b.ns; });
  if (!lines.empty()) {
    std::vector<std::vector<std::string>> table = {{"operation", "GPU time", "activities", "where"}};
    for (size_t i = 0; i < lines.size() && i < 5; ++i) {
      table.push_back({lines[i].operation, FormatDuration(lines[i].ns), absl::StrCat(lines[i].activities),
                       FormatSourceLine(lines[i].location, lines[i].line)});
    }
    out += "  Python lines by the GPU time they launched:\n" + FormatTable(table, /*left_last=*/true);
  }
  if (gpu.unattributed > 0) {
    out += absl::StrFormat("  %d GPU activities came from CUDA calls rlscope did not see (\"(launch not seen)\")\n",
                           gpu.unattributed);
  }
  if (gpu.cupti_overhead_ns > 0) {
    out += absl::StrFormat("  CUPTI reported %s of its own overhead\n", FormatDuration(gpu.cupti_overhead_ns));
  }
  return out;
}

// NvidiaSmiComparison: nvidia-smi's utilization.gpu over the run next to
// the time rlscope saw some GPU actually busy (RL-Scope's point: the former
// counts any kernel in a sampling period as 100%).
std::string NvidiaSmiComparison(const RunReport& report) {
  if (!report.nvidia_smi.has_value() || report.nvidia_smi->gpus.empty()) return "";
  std::string out = absl::StrFormat("\nGPU busy (measured by rlscope): %s of the %s run (%s)\n",
                                    FormatDuration(report.gpu_busy_ns), FormatDuration(report.metadata.wall_ns),
                                    FormatPercent(report.gpu_busy_ns, report.metadata.wall_ns));
  for (const GpuUtilizationSummary& gpu : report.nvidia_smi->gpus) {
    out += absl::StrFormat("nvidia-smi utilization.gpu, GPU %d: mean %.1f%%, max %d%% (%d samples)\n", gpu.gpu_index,
                           gpu.mean_percent, gpu.max_percent, gpu.samples);
  }
  return out;
}

}  // namespace

// HeadlineSection: the answer first (headline.h), wrapped at 78 columns.
std::string HeadlineSection(const Headline& headline) {
  std::string out = "\nthe answer:\n";
  for (const std::string& finding : headline.findings) out += Wrapped("  - ", finding);
  for (const std::string& step : headline.next_steps) out += Wrapped("  > next: ", step);
  out += Wrapped("  ", headline.correction);
  return out;
}

// CorrectionSection: what the overhead correction did (or why it did not).
std::string CorrectionSection(const RunReport& report) {
  if (!report.corrected) return absl::StrFormat("  %s\n", report.correction_message);
  std::string out;
  int64_t measured_ns = 0, corrected_ns = 0;
  for (const BreakdownRow& row : report.uncorrected_rows) {
    if (row.resource != Resource::kGpu) measured_ns += row.ns;
  }
  for (const BreakdownRow& row : report.rows) {
    if (row.resource != Resource::kGpu) corrected_ns += row.ns;
  }
  out += absl::StrFormat("  overhead correction (%s): rlscope's estimated cost %s removed from the timelines",
                         report.calibration_file, FormatDuration(static_cast<int64_t>(report.overhead.removed_ns)));
  if (measured_ns > 0) {
    out += absl::StrFormat(" (thread time %s measured -> %s corrected)", FormatDuration(measured_ns),
                           FormatDuration(corrected_ns));
  }
  out += "\n";
  if (report.corrected_wall_ns.has_value() && *report.corrected_wall_ns > 0) {
    out += absl::StrFormat(
        "  estimated wall time without rlscope: %s +- %s from the calibration's spread (profiled %s: %.2fx)\n",
        FormatDuration(*report.corrected_wall_ns), FormatDuration(report.corrected_wall_spread_ns),
        FormatDuration(report.metadata.wall_ns),
        static_cast<double>(report.metadata.wall_ns) / static_cast<double>(*report.corrected_wall_ns));
  }
  out += absl::StrFormat("  calibration quality: %s\n", calibration::DescribeQuality(report.calibration_quality));
  // Costs the calibration did not pin down (calibration::Uncertain),
  // among those this run used.
  std::vector<std::string> uncertain;
  for (const auto& [site, tally] : report.overhead.by_site) {
    if (tally.uncertain()) {
      uncertain.push_back(
          absl::StrFormat("%s %.0f +- %.0f ns", site, tally.per_event().ns, tally.per_event().spread_ns));
    }
  }
  if (!uncertain.empty()) {
    out += absl::StrFormat(
        "  uncertain costs (the calibration's repetitions disagreed): %s; the correction is "
        "approximate there\n",
        absl::StrJoin(uncertain, ", "));
  }
  // The largest costs, so a user sees what the profiler's time went to.
  std::vector<std::pair<double, std::string>> sites;
  for (const auto& [site, tally] : report.overhead.by_site) {
    sites.emplace_back(
        tally.ns, absl::StrFormat("%s %s (%d)", site, FormatDuration(static_cast<int64_t>(tally.ns)), tally.events));
  }
  std::sort(sites.rbegin(), sites.rend());
  if (sites.size() > 5) sites.resize(5);
  std::vector<std::string> parts;
  for (const auto& [ns, text] : sites) parts.push_back(text);
  if (!parts.empty()) out += absl::StrFormat("  largest costs: %s\n", absl::StrJoin(parts, ", "));
  if (const auto hook = CheckPythonHook(report.overhead)) {
    out += absl::StrFormat("  %s\n", DescribePythonHookCheck(*hook));
  }
  for (const auto& [site, speed] : report.overhead.cupti_call_speed) {
    if (speed.loop_ns <= 0 || speed.median_call_ns <= 0) continue;
    out += absl::StrFormat(
        "  %s priced x%.2f: this run's launches took %s (median of %d), the calibration's loop %s a launch\n", site,
        speed.scale, FormatDuration(static_cast<int64_t>(speed.median_call_ns)), speed.calls,
        FormatDuration(static_cast<int64_t>(speed.loop_ns)));
  }
  if (const auto caveat = BytecodeSlowdownCaveat(report.overhead)) out += absl::StrFormat("  %s\n", *caveat);
  if (report.overhead.unplaced_ns >= 1e6) {
    out += absl::StrFormat("  %s of the estimate had no time left to be removed from (estimate too high there)\n",
                           FormatDuration(static_cast<int64_t>(report.overhead.unplaced_ns)));
  }
  if (report.overhead.cpu_wait_ns >= 1e6) {
    out += absl::StrFormat(
        "  %s of the estimate are waits for a CPU: the machine was busy, and each of rlscope's costs\n"
        "  took the program's threads that much longer in wall time (their share of a CPU)\n",
        FormatDuration(static_cast<int64_t>(report.overhead.cpu_wait_ns)));
  }
  if (report.overhead.wait_restored_ns >= 1e6) {
    out += absl::StrFormat(
        "  %s of the removed time was given back to CUDA calls that waited for queued GPU work:\n"
        "  unprofiled, they would have waited that much longer\n",
        FormatDuration(static_cast<int64_t>(report.overhead.wait_restored_ns)));
  }
  // Both views side by side, per operation (thread time, all processes):
  // the tables below are the corrected ones.
  std::map<std::string, std::pair<int64_t, int64_t>> by_operation;  // measured, corrected
  for (const BreakdownRow& row : report.uncorrected_rows) {
    if (row.resource != Resource::kGpu) by_operation[row.operation].first += row.ns;
  }
  for (const BreakdownRow& row : report.rows) {
    if (row.resource != Resource::kGpu) by_operation[row.operation].second += row.ns;
  }
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> operations(by_operation.begin(), by_operation.end());
  std::sort(operations.begin(), operations.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  if (operations.size() > 8) operations.resize(8);
  out += "  operation        measured     corrected  removed\n";
  for (const auto& [operation, times] : operations) {
    const auto [measured, corrected] = times;
    out += absl::StrFormat(
        "  %-14s %10s  %12s  %5.1f%%\n", operation.substr(0, 14), FormatDuration(measured), FormatDuration(corrected),
        measured > 0 ? 100.0 * static_cast<double>(measured - corrected) / static_cast<double>(measured) : 0.0);
  }
  return out;
}

std::string FormatJobsText(const RunReport& report, std::string_view full_file) {
  std::string out;
  for (const JobReport& job : report.jobs) {
    const CellTable cells = JobCells(job, /*max_rank_columns=*/8, kMaxOperationsShown);
    std::vector<std::vector<std::string>> table = {cells.header};
    table.insert(table.end(), cells.rows.begin(), cells.rows.end());
    out += "\njob: " + JobTitle(job) + "\n";
    out += JobCommunicated(job)
               ? "  CPU thread time per operation (no Wait), summed over the ranks and per rank (a rank waiting in a\n"
                 "  collective for a slower one counts that wait in the operation that called it):\n"
               : "  CPU thread time per operation (no Wait), summed over the processes and per process:\n";
    out += FormatTable(table, /*left_last=*/true);
    if (cells.total_rows > cells.rows.size()) {
      out += absl::StrFormat("  (%d more operations in %s)\n", cells.total_rows - cells.rows.size(), full_file);
    }
    const CellTable communication = JobCommunicationCells(job, /*max_rows=*/8);
    if (const std::string note = JobCommunicationNote(job); !note.empty()) out += "\n" + Wrapped("  ", note);
    if (!communication.header.empty()) {
      std::vector<std::vector<std::string>> rows = {communication.header};
      rows.insert(rows.end(), communication.rows.begin(), communication.rows.end());
      out += FormatTable(rows, /*left_last=*/false);
      if (communication.total_rows > communication.rows.size()) {
        out += absl::StrFormat("  (%d more ranks in %s)\n", communication.total_rows - communication.rows.size(),
                               full_file);
      }
    }
  }
  return out;
}

std::string FormatReportText(const RunReport& report) {
  std::string out;
  const RunMetadata& meta = report.metadata;
  out += absl::StrFormat("rlscope report: %s\n", FormatCommandLine(meta.command));
  out += absl::StrFormat(
      "  %s, %d process(es); %s\n",
      meta.recorded ? absl::StrFormat("exit status %d, wall time %s", meta.exit_code, FormatDuration(meta.wall_ns))
                    : "exit status and wall time unknown (meta.json unreadable)",
      report.processes.size(),
      report.corrected ? "corrected for profiling overhead" : "NOT corrected for profiling overhead");
  out += HeadlineSection(MakeHeadline(report));
  out += WholeRunEstimate(report);
  out += FormatJobsText(report, "report.json");
  // Processes where nothing was intercepted (compilers, shells a program
  // spawns) get one summary line instead of a table each.
  const ProcessSplit split = SplitQuietProcesses(report);
  for (const ProcessReport* shown : split.shown) {
    const ProcessReport& process = *shown;
    const std::vector<BreakdownRow> rows = RowsOfProcess(report.rows, process.pid);
    out += absl::StrFormat("\nprocess %d%s: %s\n", process.pid,
                           process.forked_from != 0 ? absl::StrFormat(" (fork of %d)", process.forked_from) : "",
                           absl::StrJoin(process.argv, " "));
    out += absl::StrFormat("  %d traced thread(s), %s of thread time (work) over %s of process lifetime, %d events\n",
                           process.threads.size(), FormatDuration(process.traced_thread_ns),
                           FormatDuration(process.end_ns - process.begin_ns), process.events);
    out += ProcessTable(process, rows);
    out += WaitSection(process);
    out += InstanceTable(process, report.steps);
    out += TransitionTable(process);
    out += LineTable(process);
    out += UnmatchedSection(process);
    out += GpuSection(process);
    for (const std::string& problem : process.problems) out += "  ! " + problem + "\n";
  }
  if (split.quiet_count > 0) {
    out += absl::StrFormat("\n%d more process(es) with nothing intercepted (%s of thread time): %s\n",
                           split.quiet_count, FormatDuration(split.quiet_thread_ns), split.quiet_commands);
  }
  out += NvidiaSmiComparison(report);
  out += "\noverhead correction, in detail:\n" + CorrectionSection(report);
  if (!report.problems.empty()) {
    out += "\nproblems with this run's data:\n";
    for (const std::string& problem : report.problems) out += "  ! " + problem + "\n";
  }
  return out;
}

}  // namespace rlscope::report
