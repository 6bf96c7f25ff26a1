// The vocabulary every renderer shares (report_text, report_html*, diff_*,
// the commands' own output): how durations, shares, sizes, command lines
// and source lines are written, and the queries on a report's rows that
// more than one view makes.
#ifndef RLSCOPE_REPORT_REPORT_VOCABULARY_H_
#define RLSCOPE_REPORT_REPORT_VOCABULARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/run_report.h"

namespace rlscope::report {

// FormatBytes: "3.4 GB", "712 MB" (powers of 1000, as people read sizes).
std::string FormatBytes(uint64_t bytes);

// BaseName: the last part of a path ("/a/b/train.py" -> "train.py").
std::string BaseName(const std::string& path);

// FormatDuration: "12.3 s", "45.6 ms", "789 us", "12 ns".
std::string FormatDuration(int64_t ns);
// FormatCount: a count with thousands separators, "1,639,248".
std::string FormatCount(uint64_t n);

// FormatCommandLine: argv joined by spaces, "(unknown command)" if empty.
std::string FormatCommandLine(const std::vector<std::string>& argv);

// RowsOfProcess: the rows of process `pid`.
std::vector<BreakdownRow> RowsOfProcess(const std::vector<BreakdownRow>& rows, int pid);

// FormatPercent: part of whole as "12.3%", "-" when whole is not positive.
std::string FormatPercent(int64_t part, int64_t whole);

// FormatSourceLine: "file.py:LINE  qualname" from a LineRow's location
// "qualname (/path/file.py:FIRST)" and its line.
std::string FormatSourceLine(const std::string& location, uint32_t line);
// FormatLine: a report line as "FILE:LINE  FUNCTION: SOURCE TEXT", the
// file relative to the run's working directory (source_lines.h).
std::string FormatLine(const LineRow& row);

// LevelsLargestFirst: levels and their time, the largest first (ties in
// the categories' order, so every view lists them alike).
std::vector<std::pair<Category, int64_t>> LevelsLargestFirst(const std::map<Category, int64_t>& ns_by_level);

// SplitQuietProcesses: the processes a report shows, and the quiet ones
// (nothing intercepted: no operation, no category but Native, no problem),
// summarised in one line instead (compilers such as JAX's ptxas can be
// hundreds of them).
struct ProcessSplit {
  std::vector<const ProcessReport*> shown;  // In the report's order.
  int quiet_count = 0;
  int64_t quiet_thread_ns = 0;
  std::string quiet_commands;  // "ptxas x189, sh"
};
ProcessSplit SplitQuietProcesses(const RunReport& report);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_VOCABULARY_H_
