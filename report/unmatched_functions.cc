#include "report/unmatched_functions.h"

#include <algorithm>
#include <map>
#include <utility>

#include "report/run_report.h"
#include "report/source_lines.h"

namespace rlscope::report {

namespace {

constexpr char kNone[] = "(none)";

// GlobLiteral: `text` as a glob matching only itself (fnmatch: a bracket
// holds a special character literally).
std::string GlobLiteral(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '*' || c == '?' || c == '[') {
      out += '[';
      out += c;
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string RuleFor(const std::string& function, const std::string& file) {
  // A module's or class body's code: every part of the script would be one
  // operation. "<module>" is the top level; a class body runs once.
  if (function.empty() || function == "<module>") return "";
  std::string line = "operation OPERATION  " + GlobLiteral(function);
  const size_t slash = file.rfind('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  // A rule's words are split at white space and its globs' alternatives
  // at '|': a file name with either is left out (the name alone stays).
  if (!base.empty() && file[0] != '<' && base.find_first_of(" \t|") == std::string::npos) {
    // Python may hold the path relative ("train.py") or absolute.
    line += "  file=*/" + GlobLiteral(base) + "|" + GlobLiteral(base);
  }
  return line;
}

UnmatchedTime ExplainUnmatched(const ProcessReport& process, size_t limit) {
  UnmatchedTime result;
  result.thread_ns = process.traced_thread_ns;
  for (const ThreadReport& thread : process.threads) {
    for (const BreakdownRow& row : thread.rows) {
      if (row.operation == kNone && row.category != Category::kWait && row.resource != Resource::kGpu) {
        result.none_ns += row.ns;
      }
    }
  }
  // One entry per code object (its location), summed over its lines.
  std::map<std::string, UnmatchedFunction> by_location;
  for (const LineRow& line : process.python_lines) {
    if (line.operation != kNone || line.location.empty() || line.outer_ns <= 0) continue;
    UnmatchedFunction& entry = by_location[line.location];
    if (entry.calls == 0) {
      const CodeLocation location = SplitCodeLocation(line.location);
      entry.function = location.function;
      entry.file = line.file.empty() ? location.file : line.file;
      entry.user_code = line.user_code;
      entry.rule = RuleFor(location.function, location.file);
    }
    entry.ns += line.outer_ns;
    entry.calls += std::max<uint64_t>(line.calls, 1);
  }
  for (auto& [location, entry] : by_location) result.functions.push_back(std::move(entry));
  std::stable_sort(result.functions.begin(), result.functions.end(),
                   [](const UnmatchedFunction& a, const UnmatchedFunction& b) { return a.ns > b.ns; });
  if (result.functions.size() > limit) result.functions.resize(limit);
  return result;
}

}  // namespace rlscope::report
