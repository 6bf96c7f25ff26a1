#include "report_html.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "html_page.h"
#include "report_text.h"

namespace rlscope::report {

namespace {

using html::Cell;
using html::Escape;
using html::Number;
using html::Raw;
using html::Text;

// Caps that keep a big run's page small; report.json has everything.
constexpr size_t kMaxOperations = 15;
constexpr size_t kMaxProcessRows = 50;
constexpr size_t kMaxDetailedProcesses = 8;
constexpr size_t kMaxThreads = 30;
constexpr size_t kMaxLineOperations = 12;
constexpr size_t kMaxLinesPerOperation = 5;
constexpr size_t kMaxSites = 20;
constexpr size_t kMaxCommandChars = 160;

constexpr Resource kResourceOrder[] = {Resource::kCpu, Resource::kCpuGpu, Resource::kGpu};

bool IsGpuSide(const BreakdownRow& row) { return row.resource == Resource::kGpu; }

std::string Note(std::string_view text) { return absl::StrCat("<p class=\"note\">", Escape(text), "</p>"); }

std::string CappedNote(size_t shown, size_t total, std::string_view what) {
  if (shown >= total) return "";
  return Note(absl::StrFormat("Showing the %d largest of %d %s; report.json has all of them.", shown, total, what));
}

std::string CommandLine(const std::vector<std::string>& argv) {
  return argv.empty() ? "(unknown command)" : absl::StrJoin(argv, " ");
}

// Per operation: resource -> category -> ns, and its total over all rows.
struct OperationCells {
  std::string name;
  std::map<Resource, std::map<Category, int64_t>> ns;
  int64_t cpu_ns = 0, gpu_ns = 0;
};

// ByOperation: rows summed per operation (all processes), largest first;
// beyond `max_shown` they are folded into one "(N more operations)".
std::vector<OperationCells> ByOperation(const std::vector<BreakdownRow>& rows, size_t max_shown) {
  std::map<std::string, OperationCells> cells;
  for (const BreakdownRow& row : rows) {
    OperationCells& cell = cells[row.operation];
    cell.name = row.operation;
    cell.ns[row.resource][row.category] += row.ns;
    (IsGpuSide(row) ? cell.gpu_ns : cell.cpu_ns) += row.ns;
  }
  std::vector<OperationCells> ordered;
  for (auto& [name, cell] : cells) ordered.push_back(std::move(cell));
  std::stable_sort(ordered.begin(), ordered.end(), [](const OperationCells& a, const OperationCells& b) {
    return a.cpu_ns + a.gpu_ns > b.cpu_ns + b.gpu_ns;
  });
  if (ordered.size() > max_shown) {
    OperationCells folded;
    folded.name = absl::StrFormat("(%d more operations)", ordered.size() - max_shown);
    for (size_t i = max_shown; i < ordered.size(); ++i) {
      for (const auto& [resource, categories] : ordered[i].ns) {
        for (const auto& [category, ns] : categories) folded.ns[resource][category] += ns;
      }
      folded.cpu_ns += ordered[i].cpu_ns;
      folded.gpu_ns += ordered[i].gpu_ns;
    }
    ordered.resize(max_shown);
    ordered.push_back(std::move(folded));
  }
  return ordered;
}

struct Totals {
  int64_t cpu_ns = 0, gpu_ns = 0;
};
Totals SumRows(const std::vector<BreakdownRow>& rows) {
  Totals totals;
  for (const BreakdownRow& row : rows) (IsGpuSide(row) ? totals.gpu_ns : totals.cpu_ns) += row.ns;
  return totals;
}

// SegmentTitle: the hover text of one chart segment, with the exact value.
std::string SegmentTitle(const std::string& operation, Resource resource, Category category, int64_t ns,
                         const Totals& totals) {
  const bool gpu = resource == Resource::kGpu;
  return absl::StrFormat("%s \u00b7 %s \u00b7 %s: %s = %d ns (%s of the run's %s)", operation, ResourceName(resource),
                         CategoryName(category), FormatDuration(ns), ns,
                         FormatPercent(ns, gpu ? totals.gpu_ns : totals.cpu_ns), gpu ? "GPU time" : "thread time");
}

std::vector<std::string> CategoriesPresent(const std::vector<BreakdownRow>& rows) {
  std::set<Category> present;
  for (const BreakdownRow& row : rows) present.insert(row.category);
  std::vector<std::string> names;
  for (Category category : present) names.emplace_back(CategoryName(category));
  return names;
}

// MainFigure: RL-Scope's figure over `rows`: per operation a bar per
// resource, stacked by category; then the same numbers as a table.
std::string MainFigure(const std::vector<BreakdownRow>& rows, std::string_view view_name) {
  if (rows.empty()) return Note("No time was recorded: the run has no breakdown rows.");
  const Totals totals = SumRows(rows);
  const std::vector<OperationCells> operations = ByOperation(rows, kMaxOperations);
  html::BarChart chart;
  chart.description = absl::StrFormat("Time per operation, resource and category (%s)", view_name);
  chart.format_value = [](double ns) { return FormatDuration(static_cast<int64_t>(ns)); };
  for (const OperationCells& operation : operations) {
    html::ChartGroup group{operation.name, {}};
    for (Resource resource : kResourceOrder) {
      const auto it = operation.ns.find(resource);
      if (it == operation.ns.end()) continue;
      html::ChartBar bar{std::string(ResourceName(resource)), {}, ""};
      for (const auto& [category, ns] : it->second) {
        bar.segments.push_back({std::string(CategoryName(category)), static_cast<double>(ns),
                                SegmentTitle(operation.name, resource, category, ns, totals)});
      }
      group.bars.push_back(std::move(bar));
    }
    chart.groups.push_back(std::move(group));
  }
  std::string out = html::Legend(CategoriesPresent(rows)) + html::StackedBarChart(chart);
  // The table: CPU-side categories (CPU and CPU+GPU merged) and GPU time.
  std::set<Category> cpu_categories;
  for (const BreakdownRow& row : rows) {
    if (!IsGpuSide(row)) cpu_categories.insert(row.category);
  }
  std::vector<std::string> header = {"operation", "thread time", "share"};
  for (Category category : cpu_categories) header.emplace_back(CategoryName(category));
  if (totals.gpu_ns > 0) header.push_back("GPU time");
  std::vector<std::vector<Cell>> table;
  for (const OperationCells& operation : operations) {
    std::vector<Cell> line = {Text(operation.name), Number(FormatDuration(operation.cpu_ns)),
                              Number(FormatPercent(operation.cpu_ns, totals.cpu_ns))};
    for (Category category : cpu_categories) {
      int64_t ns = 0;
      for (Resource resource : {Resource::kCpu, Resource::kCpuGpu}) {
        const auto it = operation.ns.find(resource);
        if (it != operation.ns.end() && it->second.count(category) > 0) ns += it->second.at(category);
      }
      line.push_back(Number(ns > 0 ? FormatDuration(ns) : "-"));
    }
    if (totals.gpu_ns > 0) line.push_back(Number(operation.gpu_ns > 0 ? FormatDuration(operation.gpu_ns) : "-"));
    table.push_back(std::move(line));
  }
  out += html::Table(header, table, "operations");
  out += Note(absl::StrCat(
      absl::StrFormat("All processes together. Thread time %s (CPU and CPU+GPU rows: thread-seconds, threads add up)",
                      FormatDuration(totals.cpu_ns)),
      totals.gpu_ns > 0 ? absl::StrFormat("; GPU time %s (GPU rows: device busy time)", FormatDuration(totals.gpu_ns))
                        : "; no GPU rows",
      ". Hover a bar for exact values."));
  return out;
}

// InViews: `render(rows, view label)` of the corrected and the uncorrected
// rows as the two switchable views (the corrected one shown without
// script), or of the rows alone when the report is uncorrected.
template <typename Render>
std::string InViews(const RunReport& report, const Render& render) {
  if (!report.corrected) return render(report.rows, "as measured");
  return absl::StrFormat("<div data-view=\"%s\">%s</div><div data-view=\"%s\" hidden>%s</div>", kCorrectedView,
                         render(report.rows, kCorrectedView), kUncorrectedView,
                         render(report.uncorrected_rows, kUncorrectedView));
}

std::string ViewSwitch() {
  return absl::StrFormat(
      "<div class=\"switch\" role=\"group\" aria-label=\"view\">"
      "<button type=\"button\" data-show-view=\"%s\" aria-pressed=\"true\">corrected (estimated without "
      "rlscope)</button><button type=\"button\" data-show-view=\"%s\" aria-pressed=\"false\">uncorrected (as "
      "measured)</button></div>",
      kCorrectedView, kUncorrectedView);
}

std::string UtcTime(int64_t unix_ns) {
  if (unix_ns <= 0) return "unknown";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

std::string MetadataSection(const RunReport& report) {
  const RunMetadata& meta = report.metadata;
  uint64_t events = 0, dropped = 0;
  size_t threads = 0;
  for (const ProcessReport& process : report.processes) {
    events += process.events;
    dropped += process.dropped_events;
    threads += process.threads.size();
  }
  std::vector<std::pair<std::string, std::string>> facts = {
      {"command", absl::StrCat("<code>", Escape(CommandLine(meta.command)), "</code>")},
      {"exit status", absl::StrCat(meta.exit_code)},
      {"started", Escape(UtcTime(meta.start_unix_ns))},
      {"wall time (profiled)", Escape(FormatDuration(meta.wall_ns))},
  };
  if (report.corrected_wall_ns.has_value()) {
    facts.push_back({"wall time without rlscope (estimate)",
                     Escape(absl::StrFormat("%s \u00b1 %s", FormatDuration(*report.corrected_wall_ns),
                                            FormatDuration(report.corrected_wall_spread_ns)))});
  }
  facts.push_back({"overhead correction", report.corrected ? "corrected" : "<strong>not corrected</strong>"});
  facts.push_back({"processes, threads", absl::StrFormat("%d, %d", report.processes.size(), threads)});
  facts.push_back({"events", absl::StrFormat("%d (%d dropped)", events, dropped)});
  facts.push_back({"GPU capture", Escape(meta.gpu_capture.empty() ? "not recorded" : meta.gpu_capture)});
  facts.push_back({"rlscope version", Escape(meta.rlscope_version.empty() ? "unknown" : meta.rlscope_version)});
  std::string out = "<dl class=\"meta\">";
  for (const auto& [name, value] : facts) out += absl::StrCat("<dt>", Escape(name), "</dt><dd>", value, "</dd>");
  return out + "</dl>";
}

// Banners: what makes the numbers below incomplete or biased, first.
std::string Banners(const RunReport& report) {
  std::string out;
  if (report.data_damaged) {
    out += "<div class=\"banner bad\" id=\"damaged\"><strong>Some trace data was damaged.</strong> The report covers "
           "what could be read; see <a href=\"#problems\">problems</a>.</div>";
  }
  if (!report.corrected) {
    out += absl::StrCat("<div class=\"banner warn\" id=\"not-corrected\"><strong>Not corrected for rlscope's "
                        "overhead:</strong> times include the profiler's own cost. ",
                        Escape(report.correction_message), "</div>");
  }
  size_t problems = report.problems.size();
  for (const ProcessReport& process : report.processes) problems += process.problems.size();
  if (problems > 0) {
    out += absl::StrFormat("<div class=\"banner warn\">%d problem(s) with this run's data: see <a "
                           "href=\"#problems\">problems</a>.</div>",
                           problems);
  }
  return out;
}

std::string GpuBusySection(const RunReport& report) {
  std::set<std::string> statuses;
  bool captured = false;
  for (const ProcessReport& process : report.processes) {
    if (!process.gpu.status.empty()) statuses.insert(process.gpu.status);
    captured = captured || process.gpu.status == "captured" || process.gpu.busy_ns > 0;
  }
  const bool sampled = report.nvidia_smi.has_value() && !report.nvidia_smi->gpus.empty();
  std::string out;
  if (!captured) {
    out += Note(absl::StrFormat("No GPU activity was captured in this run (GPU level: %s).",
                                statuses.empty() ? "unknown" : absl::StrJoin(statuses, ", ")));
  } else {
    out += absl::StrFormat("<p>Some GPU was busy for <strong>%s</strong> of the %s run (%s), as measured from the "
                           "trace (the union of kernels, copies and memsets).</p>",
                           Escape(FormatDuration(report.gpu_busy_ns)), Escape(FormatDuration(report.metadata.wall_ns)),
                           Escape(FormatPercent(report.gpu_busy_ns, report.metadata.wall_ns)));
  }
  if (!sampled) {
    out += Note("nvidia-smi's utilization was not sampled for this run (nvidia-smi absent, or no samples in the "
                "run's window).");
    if (report.nvidia_smi.has_value()) {
      for (const std::string& problem : report.nvidia_smi->problems) out += Note(problem);
    }
    return out;
  }
  html::BarChart chart;
  chart.description = "GPU busy: the trace against nvidia-smi";
  chart.format_value = [](double percent) { return absl::StrFormat("%.0f%%", percent); };
  const double traced = report.metadata.wall_ns > 0 ? 100.0 * static_cast<double>(report.gpu_busy_ns) /
                                                           static_cast<double>(report.metadata.wall_ns)
                                                     : 0;
  auto bar = [](std::string label, std::string series, double percent, std::string title) {
    return html::ChartBar{std::move(label), {{std::move(series), percent, std::move(title)}}, ""};
  };
  chart.groups.push_back(
      {"measured by rlscope",
       {bar("any GPU", "GPU busy (trace)", traced,
            absl::StrFormat("GPU busy from the trace: %.2f%% (%d ns of %d ns)", traced, report.gpu_busy_ns,
                            report.metadata.wall_ns))}});
  for (const GpuUtilizationSummary& gpu : report.nvidia_smi->gpus) {
    chart.groups.push_back(
        {absl::StrFormat("nvidia-smi, GPU %d", gpu.gpu_index),
         {bar("mean", "nvidia-smi", gpu.mean_percent,
              absl::StrFormat("nvidia-smi utilization.gpu mean %.1f%% over %d samples", gpu.mean_percent,
                              gpu.samples)),
          bar("max", "nvidia-smi", gpu.max_percent,
              absl::StrFormat("nvidia-smi utilization.gpu max %d%%", gpu.max_percent))}});
  }
  out += html::StackedBarChart(chart);
  out += Note("nvidia-smi counts a sample period as busy when any kernel ran in it, however small: it reads high "
              "for RL workloads that run many tiny kernels.");
  for (const std::string& problem : report.nvidia_smi->problems) out += Note(problem);
  return out;
}

std::string CorrectionSection(const RunReport& report) {
  if (!report.corrected) {
    return absl::StrCat("<p><strong>Uncorrected.</strong> ", Escape(report.correction_message), "</p>");
  }
  const ProcessCorrection& overhead = report.overhead;
  std::string out = absl::StrFormat(
      "<p>Calibration <code>%s</code>: rlscope's estimated cost %s, of which %s was removed from the timelines "
      "(%s had no time left to be removed from).</p>",
      Escape(report.calibration_file), Escape(FormatDuration(static_cast<int64_t>(overhead.estimated_ns))),
      Escape(FormatDuration(static_cast<int64_t>(overhead.removed_ns))),
      Escape(FormatDuration(static_cast<int64_t>(overhead.unplaced_ns))));
  std::vector<std::pair<std::string, SiteOverhead>> sites(overhead.by_site.begin(), overhead.by_site.end());
  std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < sites.size() && i < kMaxSites; ++i) {
    const SiteOverhead& site = sites[i].second;
    table.push_back({Raw(absl::StrCat("<code>", Escape(sites[i].first), "</code>")), Number(absl::StrCat(site.events)),
                     Number(FormatDuration(static_cast<int64_t>(site.ns))),
                     Number(FormatDuration(static_cast<int64_t>(site.spread_ns)))});
  }
  if (!table.empty()) {
    out += html::Table({"overhead site", "events", "estimated cost", "\u00b1 spread"}, table);
    out += CappedNote(std::min(sites.size(), kMaxSites), sites.size(), "sites");
  }
  if (!overhead.uncalibrated.empty()) {
    std::vector<std::string> names;
    for (const auto& [site, events] : overhead.uncalibrated) names.push_back(absl::StrFormat("%s (%d)", site, events));
    out += Note("Sites without a calibrated cost (not removed): " + absl::StrJoin(names, ", "));
  }
  return out;
}

std::vector<BreakdownRow> RowsOf(const std::vector<BreakdownRow>& rows, int pid) {
  std::vector<BreakdownRow> own;
  for (const BreakdownRow& row : rows) {
    if (row.pid == pid) own.push_back(row);
  }
  return own;
}

std::string ProcessTable(const RunReport& report, const std::vector<const ProcessReport*>& processes) {
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < processes.size() && i < kMaxProcessRows; ++i) {
    const ProcessReport& process = *processes[i];
    table.push_back({Number(absl::StrCat(process.pid)),
                     Number(process.forked_from != 0 ? absl::StrFormat("fork of %d", process.forked_from)
                                                     : absl::StrCat(process.ppid)),
                     Raw(absl::StrCat("<code>", Escape(html::Truncate(CommandLine(process.argv), kMaxCommandChars)),
                                      "</code>")),
                     Number(absl::StrCat(process.threads.size())), Number(FormatDuration(process.traced_thread_ns)),
                     Number(FormatDuration(process.end_ns - process.begin_ns)), Number(absl::StrCat(process.events)),
                     Number(absl::StrCat(process.dropped_events)), Text(process.gpu.status.empty() ? "-" : process.gpu.status),
                     Text(process.ended_cleanly ? "yes" : "no")});
  }
  return html::Table({"pid", "parent", "command", "threads", "thread time", "lifetime", "events", "dropped", "GPU",
                      "ended cleanly"},
                     table) +
         CappedNote(std::min(processes.size(), kMaxProcessRows), processes.size(), "processes (by thread time)");
}

std::string ThreadTable(const ProcessReport& process) {
  std::vector<std::pair<int64_t, const ThreadReport*>> threads;
  for (const ThreadReport& thread : process.threads) {
    int64_t ns = 0;
    for (const BreakdownRow& row : thread.rows) ns += IsGpuSide(row) ? 0 : row.ns;
    threads.emplace_back(ns, &thread);
  }
  std::stable_sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const int64_t widest = threads.empty() ? 0 : threads.front().first;
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < threads.size() && i < kMaxThreads; ++i) {
    const auto& [ns, thread] = threads[i];
    std::map<Category, int64_t> by_category;
    for (const BreakdownRow& row : thread->rows) {
      if (!IsGpuSide(row)) by_category[row.category] += row.ns;
    }
    std::vector<html::ChartSegment> segments;
    for (const auto& [category, category_ns] : by_category) {
      segments.push_back({std::string(CategoryName(category)), static_cast<double>(category_ns),
                          absl::StrFormat("thread %d \u00b7 %s: %s = %d ns (%s of its time)", thread->tid,
                                          CategoryName(category), FormatDuration(category_ns), category_ns,
                                          FormatPercent(category_ns, ns))});
    }
    table.push_back({Number(absl::StrCat(thread->tid)), Text(thread->name.empty() ? "-" : thread->name),
                     Number(FormatDuration(ns)), Raw(html::MiniBar(segments, static_cast<double>(widest))),
                     Number(FormatDuration(thread->end_ns - thread->begin_ns)), Number(absl::StrCat(thread->events)),
                     Number(absl::StrCat(thread->dropped_events)), Number(absl::StrCat(thread->cuda_api_calls)),
                     Text(thread->active_time_only ? "active time (helper)" : "lifetime")});
  }
  return html::Table({"tid", "name", "thread time", "by category", "lifetime", "events", "dropped", "CUDA calls",
                      "counted"},
                     table) +
         CappedNote(std::min(threads.size(), kMaxThreads), threads.size(), "threads");
}

// TransitionTable: per operation, crossings between levels per instance
// (RL-Scope's transitions per iteration).
std::string TransitionTable(const ProcessReport& process) {
  if (process.transitions.empty()) return Note("No transitions between stack levels were recorded.");
  std::map<std::string, std::map<std::string, double>> per_instance;
  std::map<std::string, uint64_t> instances, counts;
  std::set<std::string> columns;
  for (const TransitionRow& row : process.transitions) {
    const std::string column = absl::StrFormat("%s\u2192%s", CategoryName(row.from), CategoryName(row.to));
    const uint64_t divisor = row.operation_instances > 0 ? row.operation_instances : 1;
    per_instance[row.operation][column] += static_cast<double>(row.count) / static_cast<double>(divisor);
    instances[row.operation] = row.operation_instances;
    counts[row.operation] += row.count;
    columns.insert(column);
  }
  std::vector<std::string> operations;
  for (const auto& [operation, count] : counts) operations.push_back(operation);
  std::stable_sort(operations.begin(), operations.end(),
                   [&](const std::string& a, const std::string& b) { return counts[a] > counts[b]; });
  std::vector<std::string> header = {"operation", "instances"};
  header.insert(header.end(), columns.begin(), columns.end());
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < operations.size() && i < kMaxOperations; ++i) {
    const std::string& operation = operations[i];
    std::vector<Cell> line = {Text(operation),
                              Number(instances[operation] > 0 ? absl::StrCat(instances[operation]) : "-")};
    for (const std::string& column : columns) {
      const auto it = per_instance[operation].find(column);
      line.push_back(Number(it == per_instance[operation].end() ? "-" : absl::StrFormat("%.1f", it->second)));
    }
    table.push_back(std::move(line));
  }
  return html::Table(header, table) +
         CappedNote(std::min(operations.size(), kMaxOperations), operations.size(), "operations") +
         Note("Per operation instance (per iteration); operations without an instance count, such as (none), show "
              "the plain count.");
}

// LineTable: per operation, the Python lines whose native calls took most.
std::string LineTable(const ProcessReport& process) {
  if (process.python_lines.empty()) return "";
  std::map<std::string, std::vector<const LineRow*>> by_operation;
  for (const LineRow& line : process.python_lines) by_operation[line.operation].push_back(&line);
  std::vector<std::pair<int64_t, std::string>> operations;
  for (auto& [operation, lines] : by_operation) {
    std::stable_sort(lines.begin(), lines.end(), [](const LineRow* a, const LineRow* b) { return a->ns > b->ns; });
    operations.emplace_back(lines.front()->ns, operation);
  }
  std::stable_sort(operations.begin(), operations.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < operations.size() && i < kMaxLineOperations; ++i) {
    const std::vector<const LineRow*>& lines = by_operation[operations[i].second];
    for (size_t k = 0; k < lines.size() && k < kMaxLinesPerOperation; ++k) {
      table.push_back({Text(k == 0 ? lines[k]->operation : ""),
                       Raw(absl::StrCat("<code>", Escape(FormatSourceLine(lines[k]->location, lines[k]->line)),
                                        "</code>")),
                       Number(FormatDuration(lines[k]->ns)), Number(absl::StrCat(lines[k]->calls))});
    }
  }
  return "<h3>Top Python lines per operation, by the native time their calls took</h3>" +
         html::Table({"operation", "where", "native time", "calls"}, table) +
         CappedNote(std::min(operations.size(), kMaxLineOperations), operations.size(), "operations");
}

std::string ProcessGpu(const ProcessReport& process) {
  const GpuAnalysis& gpu = process.gpu;
  if (gpu.status.empty() || gpu.status == "unused") return "";
  std::string out = absl::StrFormat("<h3>GPU (%s)</h3>", Escape(gpu.status));
  if (!gpu.message.empty()) out += Note(gpu.message);
  if (gpu.kernels + gpu.memcpys + gpu.memsets == 0) return out;
  out += absl::StrFormat(
      "<p>%d device(s) busy %s of the process's %s; %d kernels (%s), %d copies (%s), %d memsets (%s).</p>",
      gpu.devices, Escape(FormatDuration(gpu.busy_ns)), Escape(FormatDuration(process.end_ns - process.begin_ns)),
      gpu.kernels, Escape(FormatDuration(gpu.kernel_ns)), gpu.memcpys, Escape(FormatDuration(gpu.memcpy_ns)),
      gpu.memsets, Escape(FormatDuration(gpu.memset_ns)));
  std::vector<OperationGpuRow> operations = gpu.operations;
  std::stable_sort(operations.begin(), operations.end(),
                   [](const OperationGpuRow& a, const OperationGpuRow& b) { return a.wall_ns > b.wall_ns; });
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < operations.size() && i < kMaxOperations; ++i) {
    const OperationGpuRow& row = operations[i];
    table.push_back({Text(row.operation), Number(row.wall_ns > 0 ? FormatDuration(row.wall_ns) : "-"),
                     Number(FormatPercent(row.gpu_busy_ns, row.wall_ns)), Number(absl::StrCat(row.kernels)),
                     Number(FormatDuration(row.kernel_ns))});
  }
  if (!table.empty()) {
    out += html::Table({"operation", "wall time", "GPU busy", "kernels launched", "their GPU time"}, table) +
           CappedNote(std::min(operations.size(), kMaxOperations), operations.size(), "operations");
  }
  return out;
}

std::string ProcessSection(const RunReport& report, const ProcessReport& process) {
  std::string out = absl::StrFormat("<h2 id=\"process-%d\">Process %d%s</h2><p><code>%s</code></p>", process.pid,
                                    process.pid,
                                    process.forked_from != 0 ? absl::StrFormat(" (fork of %d)", process.forked_from) : "",
                                    Escape(html::Truncate(CommandLine(process.argv), kMaxCommandChars)));
  out += "<h3>Time per operation</h3>";
  if (report.processes.size() == 1) {
    out += Note("The run's only process: its breakdown is the one under \"Where the time went\".");
  } else {
    out += InViews(report, [&](const std::vector<BreakdownRow>& rows, std::string_view view) {
      return MainFigure(RowsOf(rows, process.pid), view);
    });
  }
  out += absl::StrFormat("<h3>Threads</h3>%s", ThreadTable(process));
  if (report.corrected) out += Note("Thread rows are the corrected ones.");
  out += "<h3>Transitions per iteration</h3>" + TransitionTable(process);
  out += LineTable(process);
  out += ProcessGpu(process);
  for (const std::string& problem : process.problems) {
    out += absl::StrCat("<div class=\"banner warn\">", Escape(problem), "</div>");
  }
  return out;
}

std::string ProblemsSection(const RunReport& report) {
  std::string items;
  for (const std::string& problem : report.problems) items += absl::StrCat("<li>", Escape(problem), "</li>");
  for (const ProcessReport& process : report.processes) {
    for (const std::string& problem : process.problems) {
      items += absl::StrFormat("<li>process %d: %s</li>", process.pid, Escape(problem));
    }
  }
  if (items.empty()) return "<p>None: the trace was read completely and no events were dropped.</p>";
  return absl::StrCat("<ul>", items, "</ul>");
}

}  // namespace

std::string FormatReportHtml(const RunReport& report) {
  std::string body = absl::StrFormat("<h1>rlscope report</h1><p class=\"mono\">%s</p>",
                                     Escape(CommandLine(report.metadata.command)));
  body += Banners(report);
  body += MetadataSection(report);
  body += "<h2 id=\"breakdown\">Where the time went</h2>";
  if (report.corrected) {
    body += ViewSwitch() +
            Note("Corrected: rlscope's own overhead removed where it happened (estimate); uncorrected: as measured, "
                 "with the profiler's cost as category Profiler. The switch applies to every breakdown on the page; "
                 "report.html#uncorrected opens that view.");
  }
  body += InViews(report, MainFigure);
  body += "<h2 id=\"gpu\">GPU busy: the trace against nvidia-smi</h2>" + GpuBusySection(report);
  body += "<h2 id=\"correction\">Overhead correction and calibration</h2>" + CorrectionSection(report);
  // Processes by thread time; quiet ones (nothing intercepted) only in the table.
  std::vector<const ProcessReport*> processes;
  for (const ProcessReport& process : report.processes) processes.push_back(&process);
  std::stable_sort(processes.begin(), processes.end(), [](const ProcessReport* a, const ProcessReport* b) {
    return a->traced_thread_ns > b->traced_thread_ns;
  });
  body += "<h2 id=\"processes\">Processes</h2>";
  body += processes.empty() ? Note("No process was traced.") : ProcessTable(report, processes);
  size_t detailed = 0, quiet = 0;
  for (const ProcessReport* process : processes) {
    if (IsQuietProcess(*process, RowsOf(report.rows, process->pid))) {
      ++quiet;
    } else if (detailed++ < kMaxDetailedProcesses) {
      body += ProcessSection(report, *process);
    }
  }
  if (detailed > kMaxDetailedProcesses) {
    body += Note(absl::StrFormat("%d more processes with intercepted activity are in the table above only.",
                                 detailed - kMaxDetailedProcesses));
  }
  if (quiet > 0) body += Note(absl::StrFormat("%d process(es) had nothing intercepted.", quiet));
  body += "<h2 id=\"problems\">Problems with this run's data</h2>" + ProblemsSection(report);
  return html::Page(absl::StrCat("rlscope report: ", html::Truncate(CommandLine(report.metadata.command), 80)), body);
}

}  // namespace rlscope::report
