#include "report/report_html_process.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/html_page.h"
#include "report/report_html_breakdown.h"
#include "report/report_tables.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

using html::CappedNote;
using html::Cell;
using html::Escape;
using html::Note;
using html::Number;
using html::Raw;
using html::Text;

// Caps that keep a big run's page small; report.json has everything.
constexpr size_t kMaxProcessRows = 50;
constexpr size_t kMaxThreads = 30;
constexpr size_t kMaxLineOperations = 12;
constexpr size_t kMaxLinesPerOperation = 5;
constexpr size_t kMaxCommandChars = 160;

// ThreadTable: per thread its work ("thread time"), its Wait (blocked) and
// a bar of both by category; threads by work + Wait, the largest first.
std::string ThreadTable(const ProcessReport& process) {
  std::vector<std::pair<int64_t, const ThreadReport*>> threads;
  for (const ThreadReport& thread : process.threads) {
    threads.emplace_back(SumRows(thread.rows).cpu_ns, &thread);
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
    const int64_t wait_ns = by_category.count(Category::kWait) > 0 ? by_category[Category::kWait] : 0;
    std::vector<html::ChartSegment> segments;
    for (const auto& [category, category_ns] : by_category) {
      segments.push_back(
          {std::string(CategoryName(category)), static_cast<double>(category_ns),
           absl::StrFormat("thread %d \u00b7 %s: %s = %d ns (%s of its time)", thread->tid, CategoryName(category),
                           FormatDuration(category_ns), category_ns, FormatPercent(category_ns, ns))});
    }
    table.push_back({Number(absl::StrCat(thread->tid)), Text(thread->name.empty() ? "-" : thread->name),
                     Number(FormatDuration(ns - wait_ns)), Number(wait_ns > 0 ? FormatDuration(wait_ns) : "-"),
                     Raw(html::MiniBar(segments, static_cast<double>(widest))),
                     Number(FormatDuration(thread->end_ns - thread->begin_ns)), Number(FormatCount(thread->events)),
                     Number(FormatCount(thread->dropped_events)), Number(FormatCount(thread->cuda_api_calls)),
                     Text(thread->active_time_only ? "active time (helper)" : "lifetime")});
  }
  return html::Table({"tid", "name", "thread time", "Wait", "by category", "lifetime", "events", "dropped",
                      "CUDA calls", "counted"},
                     table) +
         CappedNote(std::min(threads.size(), kMaxThreads), threads.size(), "threads");
}

// HtmlRows: a CellTable's rows as cells: the first column text, the rest numbers.
std::vector<std::vector<Cell>> HtmlRows(const CellTable& cells) {
  std::vector<std::vector<Cell>> rows;
  for (const std::vector<std::string>& row : cells.rows) {
    std::vector<Cell> line;
    for (size_t i = 0; i < row.size(); ++i) line.push_back(i == 0 ? Text(row[i]) : Number(row[i]));
    rows.push_back(std::move(line));
  }
  return rows;
}

}  // namespace

std::string JobsSectionHtml(const RunReport& report) {
  if (report.jobs.empty()) return "";
  std::string out = "<h2 id=\"jobs\">Distributed jobs: ranks side by side</h2>";
  for (const JobReport& job : report.jobs) {
    const CellTable cells = JobCells(job, /*max_rank_columns=*/8, kMaxHtmlOperations);
    out += absl::StrFormat("<h3>%s</h3>", Escape(JobTitle(job))) + html::Table(cells.header, HtmlRows(cells)) +
           CappedNote(cells.rows.size(), cells.total_rows, "operations");
    const CellTable communication = JobCommunicationCells(job, kMaxHtmlOperations);
    if (!communication.header.empty()) {
      out += html::Table(communication.header, HtmlRows(communication)) +
             CappedNote(communication.rows.size(), communication.total_rows, "ranks");
    }
    if (const std::string note = JobCommunicationNote(job); !note.empty()) out += Note(note);
  }
  return out + Note(
                   "CPU thread time per operation (Wait aside), summed over the ranks and per rank; the slowest rank "
                   "of each operation and its time over the ranks' mean. A rank waiting inside a collective for a "
                   "slower one counts that wait in the operation that called it.");
}

namespace {

// TransitionTable: per operation, crossings between levels per instance
// (RL-Scope's transitions per iteration).
std::string TransitionTable(const ProcessReport& process) {
  if (process.transitions.empty()) return Note("No transitions between stack levels were recorded.");
  const CellTable cells = TransitionCells(process, "\u2192", kMaxHtmlOperations);
  return html::Table(cells.header, HtmlRows(cells)) + CappedNote(cells.rows.size(), cells.total_rows, "operations") +
         Note(
             "Per operation instance (per iteration); operations without an instance count, such as (none), show "
             "the plain count.");
}

// InstanceTable: per operation with instances, how long one took in it;
// per step: its time divided by the run's environment steps.
std::string InstanceTable(const ProcessReport& process, uint64_t steps) {
  if (process.instance_stats.empty()) return "";
  const CellTable cells = InstanceCells(process, steps, kMaxHtmlOperations);
  std::string note =
      "The time one instance took in its operation (an instance owns its operation's time until the next one "
      "starts); p50 and p95 are nearest-rank.";
  if (steps > 0) {
    note += absl::StrFormat(" Per step: the operation's time over the run's %s environment steps (entries into %s).",
                            FormatCount(steps), kStepOperation);
  }
  return "<h3>Operation instances</h3>" + html::Table(cells.header, HtmlRows(cells)) +
         CappedNote(cells.rows.size(), cells.total_rows, "operations") + Note(note);
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
  std::stable_sort(operations.begin(), operations.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < operations.size() && i < kMaxLineOperations; ++i) {
    const std::vector<const LineRow*>& lines = by_operation[operations[i].second];
    for (size_t k = 0; k < lines.size() && k < kMaxLinesPerOperation; ++k) {
      table.push_back({Text(k == 0 ? lines[k]->operation : ""),
                       Raw(absl::StrCat("<code>", Escape(FormatLine(*lines[k])), "</code>")),
                       Number(FormatDuration(lines[k]->ns)), Number(FormatCount(lines[k]->calls))});
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
      "<p>%d device(s) busy %s of the process's %s; %d kernels (%s), %d copies (%s), %d memsets (%s).</p>", gpu.devices,
      Escape(FormatDuration(gpu.busy_ns)), Escape(FormatDuration(process.end_ns - process.begin_ns)), gpu.kernels,
      Escape(FormatDuration(gpu.kernel_ns)), gpu.memcpys, Escape(FormatDuration(gpu.memcpy_ns)), gpu.memsets,
      Escape(FormatDuration(gpu.memset_ns)));
  std::vector<OperationGpuRow> operations = gpu.operations;
  std::stable_sort(operations.begin(), operations.end(),
                   [](const OperationGpuRow& a, const OperationGpuRow& b) { return a.wall_ns > b.wall_ns; });
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < operations.size() && i < kMaxHtmlOperations; ++i) {
    const OperationGpuRow& row = operations[i];
    table.push_back({Text(row.operation), Number(row.wall_ns > 0 ? FormatDuration(row.wall_ns) : "-"),
                     Number(FormatPercent(std::llround(row.gpu_busy_fraction * 1e6), row.wall_ns > 0 ? 1000000 : 0)),
                     Number(FormatCount(row.kernels)), Number(FormatDuration(row.kernel_ns))});
  }
  if (!table.empty()) {
    out += html::Table({"operation", "wall time", "GPU busy", "kernels launched", "their GPU time"}, table) +
           CappedNote(std::min(operations.size(), kMaxHtmlOperations), operations.size(), "operations");
  }
  return out;
}

}  // namespace

std::string ProcessTableHtml(const std::vector<const ProcessReport*>& processes) {
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < processes.size() && i < kMaxProcessRows; ++i) {
    const ProcessReport& process = *processes[i];
    const std::string command = html::Truncate(FormatCommandLine(process.argv), kMaxCommandChars);
    table.push_back({Number(absl::StrCat(process.pid)),
                     Number(process.forked_from != 0 ? absl::StrFormat("fork of %d", process.forked_from)
                                                     : absl::StrCat(process.ppid)),
                     Raw(absl::StrCat("<code class=\"command\">", Escape(command), "</code>")),
                     Number(absl::StrCat(process.threads.size())), Number(FormatDuration(process.traced_thread_ns)),
                     Number(process.wait_ns > 0 ? FormatDuration(process.wait_ns) : "-"),
                     Number(FormatDuration(process.end_ns - process.begin_ns)), Number(FormatCount(process.events)),
                     Number(FormatCount(process.dropped_events)),
                     Text(process.gpu.status.empty() ? "-" : process.gpu.status),
                     Text(process.ended_cleanly ? "yes" : "no")});
  }
  return html::Table({"pid", "parent", "command", "threads", "thread time", "Wait", "lifetime", "events", "dropped",
                      "GPU", "ended cleanly"},
                     table) +
         CappedNote(std::min(processes.size(), kMaxProcessRows), processes.size(), "processes (by thread time)") +
         Note(
             "Thread time is the threads' work; Wait is their time blocked (locks, queues, Event.wait, sleep, "
             "select/poll, sockets, pipe reads, waitpid), in no operation's time.");
}

std::string ProcessSectionHtml(const RunReport& report, const ProcessReport& process) {
  const std::string fork = process.forked_from != 0 ? absl::StrFormat(" (fork of %d)", process.forked_from) : "";
  std::string out =
      absl::StrFormat("<h2 id=\"process-%d\">Process %d%s</h2><p><code>%s</code></p>", process.pid, process.pid, fork,
                      Escape(html::Truncate(FormatCommandLine(process.argv), kMaxCommandChars)));
  out += "<h3>Time per operation</h3>";
  if (report.processes.size() == 1) {
    out += Note("The run's only process: its breakdown is the one under \"Where the time went\".");
  } else {
    out += BreakdownViews(report, process.pid);
  }
  out += absl::StrFormat("<h3>Threads</h3>%s", ThreadTable(process));
  if (process.wait_ns > 0) {
    out +=
        Note(absl::StrFormat("Wait: the threads were blocked %s in all (lock, queue, Event.wait, sleep, "
                             "select/poll, socket, pipe read, waitpid). It is part of each thread's time here "
                             "and of no operation's time above.",
                             FormatDuration(process.wait_ns)));
  }
  if (report.corrected) out += Note("Thread rows are the corrected ones.");
  out += InstanceTable(process, report.steps);
  out += "<h3>Transitions per iteration</h3>" + TransitionTable(process);
  out += LineTable(process);
  out += ProcessGpu(process);
  for (const std::string& problem : process.problems) {
    out += absl::StrCat("<div class=\"banner warn\">", Escape(problem), "</div>");
  }
  return out;
}

}  // namespace rlscope::report
