#include "report/report_vocabulary.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rlscope::report {

std::string FormatBytes(uint64_t bytes) {
  const double value = static_cast<double>(bytes);
  if (value >= 1e12) return absl::StrFormat("%.1f TB", value / 1e12);
  if (value >= 1e9) return absl::StrFormat("%.1f GB", value / 1e9);
  if (value >= 1e6) return absl::StrFormat("%.0f MB", value / 1e6);
  if (value >= 1e3) return absl::StrFormat("%.0f kB", value / 1e3);
  return absl::StrFormat("%d B", bytes);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string FormatCommandLine(const std::vector<std::string>& argv) {
  return argv.empty() ? "(unknown command)" : absl::StrJoin(argv, " ");
}

std::vector<BreakdownRow> RowsOfProcess(const std::vector<BreakdownRow>& rows, int pid) {
  std::vector<BreakdownRow> own;
  for (const BreakdownRow& row : rows) {
    if (row.pid == pid) own.push_back(row);
  }
  return own;
}

std::vector<std::pair<Category, int64_t>> LevelsLargestFirst(const std::map<Category, int64_t>& ns_by_level) {
  std::vector<std::pair<Category, int64_t>> levels(ns_by_level.begin(), ns_by_level.end());
  // Stable over the map's category order: equal times keep that order.
  std::stable_sort(levels.begin(), levels.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return levels;
}

std::string FormatPercent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string FormatSourceLine(const std::string& location, uint32_t line) {
  const size_t open = location.rfind(" (");
  const size_t colon = location.rfind(':');
  if (open == std::string::npos || colon == std::string::npos || colon < open) return location;
  const std::string file = location.substr(open + 2, colon - open - 2);
  return absl::StrFormat("%s:%d  %s", BaseName(file), line, location.substr(0, open));
}

std::string FormatLine(const LineRow& row) {
  if (row.file.empty()) return FormatSourceLine(row.location, row.line);
  std::string out = absl::StrFormat("%s:%d  %s", row.file, row.line, row.function);
  if (!row.source.empty()) absl::StrAppend(&out, ": ", row.source);
  return out;
}

ProcessSplit SplitQuietProcesses(const RunReport& report) {
  // Processes with a row other than Native time in no operation or in
  // compile (a compiler helper, operation_inference.h: JAX starts ptxas by
  // the hundred, each its own process with only that).
  std::set<int> loud_pids;
  for (const BreakdownRow& row : report.rows) {
    if ((row.operation != "(none)" && row.operation != "compile") || row.category != Category::kNative) {
      loud_pids.insert(row.pid);
    }
  }
  ProcessSplit split;
  std::map<std::string, int> commands;
  for (const ProcessReport& process : report.processes) {
    if (!process.problems.empty() || loud_pids.count(process.pid) > 0) {
      split.shown.push_back(&process);
      continue;
    }
    ++commands[process.argv.empty() ? "?" : BaseName(process.argv[0])];
    ++split.quiet_count;
    split.quiet_thread_ns += process.traced_thread_ns;
  }
  std::vector<std::string> parts;
  for (const auto& [command, n] : commands) parts.push_back(n > 1 ? absl::StrFormat("%s x%d", command, n) : command);
  split.quiet_commands = absl::StrJoin(parts, ", ");
  return split;
}

std::string FormatDuration(int64_t ns) {
  const double value = static_cast<double>(ns);
  if (ns >= 1'000'000'000) return absl::StrFormat("%.3f s", value / 1e9);
  if (ns >= 1'000'000) return absl::StrFormat("%.2f ms", value / 1e6);
  if (ns >= 1'000) return absl::StrFormat("%.1f us", value / 1e3);
  return absl::StrFormat("%d ns", ns);
}

std::string FormatCount(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace rlscope::report
