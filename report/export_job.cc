#include "report/export_job.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "report/category.h"
#include "report/export_csv.h"

namespace rlscope::report {

namespace {

// Chrome's ts/dur: microseconds, with the nanoseconds kept as a fraction.
double Micros(int64_t ns) { return static_cast<double>(ns) / 1e3; }

std::string ProcessName(const std::string& label, const ProcessReport& process) {
  std::string name = absl::StrFormat("%s pid %d", label, process.pid);
  if (!process.rank.launcher.empty()) {
    name += absl::StrFormat(" (%s rank %d of %d)", process.rank.launcher, process.rank.rank, process.rank.world_size);
  }
  if (!process.argv.empty()) name += ": " + process.argv.front();
  return name;
}

}  // namespace

void WriteJobCsv(const MergedJob& job, std::ostream& out) {
  out << "view,node,process,operation,resource,category,ns\r\n";
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    const char* view = job.nodes[n].corrected ? "corrected" : "uncorrected";
    for (const BreakdownRow& row : job.nodes[n].report.rows) {
      out << view << ',' << CsvField(job.labels[n]) << ',' << row.pid << ',' << CsvField(row.operation) << ','
          << CsvField(ResourceName(row.resource)) << ',' << CsvField(CategoryName(row.category)) << ',' << row.ns
          << "\r\n";
    }
  }
}

void WriteJobChromeTrace(const MergedJob& job, std::ostream& out) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    for (const ProcessReport& process : job.nodes[n].report.processes) {
      origin = std::min(origin, job.clocks[n].ToReference(process.begin_ns));
    }
  }
  // One event per line: a job of many ranks' collectives is streamed, not
  // built as one document.
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  const auto emit = [&](const nlohmann::ordered_json& event) {
    out << (first ? "" : ",\n") << event.dump();
    first = false;
  };
  constexpr int kLifeThread = 1, kCollectiveThread = 2;
  int id = 0;  // Chrome's pid: pids repeat across hosts.
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    const NodeClock& clock = job.clocks[n];
    for (const ProcessReport& process : job.nodes[n].report.processes) {
      ++id;
      const auto at = [&](int64_t ns) { return Micros(clock.ToReference(ns) - origin); };
      emit({{"ph", "M"},
            {"name", "process_name"},
            {"pid", id},
            {"args", {{"name", ProcessName(job.labels[n], process)}}}});
      emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", id}, {"args", {{"sort_index", id}}}});
      emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", id}, {"tid", kLifeThread}, {"args", {{"name", "process"}}}});
      emit({{"ph", "X"},
            {"name", "process"},
            {"cat", "process"},
            {"pid", id},
            {"tid", kLifeThread},
            {"ts", at(process.begin_ns)},
            {"dur", Micros(process.end_ns - process.begin_ns)},
            {"args", {{"node", job.labels[n]}, {"pid", process.pid}}}});
      if (process.collectives.empty()) continue;
      emit({{"ph", "M"},
            {"name", "thread_name"},
            {"pid", id},
            {"tid", kCollectiveThread},
            {"args", {{"name", "collectives"}}}});
      for (size_t k = 0; k < process.collectives.size(); ++k) {
        const CollectiveCall& call = process.collectives[k];
        const size_t op = static_cast<size_t>(call.operation);
        const std::string operation =
            op < process.collective_operations.size() ? process.collective_operations[op] : "(unknown)";
        emit({{"ph", "X"},
              {"name", "collective in " + operation},
              {"cat", "Communication"},
              {"pid", id},
              {"tid", kCollectiveThread},
              {"ts", at(call.begin_ns)},
              {"dur", Micros(clock.ToReference(call.end_ns) - clock.ToReference(call.begin_ns))},
              {"args", {{"index", k}, {"operation", operation}}}});
      }
    }
  }
  out << "\n]}\n";
}

}  // namespace rlscope::report
