#include "report/report_html_breakdown.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_page.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

using html::Cell;
using html::Note;
using html::Number;
using html::Text;

constexpr Resource kResourceOrder[] = {Resource::kCpu, Resource::kCpuGpu, Resource::kGpu};

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

// SegmentTitle: the hover text of one chart segment, with the exact value.
std::string SegmentTitle(const std::string& operation, Resource resource, Category category, int64_t ns,
                         const RowTotals& totals) {
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

// Figure: RL-Scope's figure over `rows`: per operation a bar per
// resource, stacked by category; then the same numbers as a table and a
// note on what the totals cover (`scope`: whose rows these are).
std::string Figure(const std::vector<BreakdownRow>& rows, std::string_view view_name, std::string_view scope) {
  if (rows.empty()) return Note("No time was recorded: there are no breakdown rows.");
  const RowTotals totals = SumRows(rows);
  const std::vector<OperationCells> operations = ByOperation(rows, kMaxHtmlOperations);
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
      absl::StrFormat("%s Thread time %s (CPU and CPU+GPU rows: thread-seconds, threads add up)", std::string(scope),
                      FormatDuration(totals.cpu_ns)),
      totals.gpu_ns > 0 ? absl::StrFormat("; GPU time %s (GPU rows: device busy time)", FormatDuration(totals.gpu_ns))
                        : "; no GPU rows",
      ". Hover a bar for exact values."));
  return out;
}

}  // namespace

RowTotals SumRows(const std::vector<BreakdownRow>& rows) {
  RowTotals totals;
  for (const BreakdownRow& row : rows) (IsGpuSide(row) ? totals.gpu_ns : totals.cpu_ns) += row.ns;
  return totals;
}

std::string BreakdownViews(const RunReport& report, int pid) {
  auto figure = [&](const std::vector<BreakdownRow>& rows, std::string_view view) {
    if (pid == 0) return Figure(rows, view, "All processes together.");
    return Figure(RowsOfProcess(rows, pid), view, "This process.");
  };
  if (!report.corrected) return figure(report.rows, "as measured");
  return absl::StrFormat("<div data-view=\"%s\">%s</div><div data-view=\"%s\" hidden>%s</div>", kCorrectedView,
                         figure(report.rows, kCorrectedView), kUncorrectedView,
                         figure(report.uncorrected_rows, kUncorrectedView));
}

}  // namespace rlscope::report
