#include "report/export_folded.h"

#include <map>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "report/export_tracks.h"

namespace rlscope::report {

std::string FoldedFrame(std::string_view name) {
  std::string frame(name);
  for (char& c : frame) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return frame;
}

std::string LineFrame(std::string_view location, uint32_t line) {
  const size_t colon = location.rfind(':');
  if (colon != std::string_view::npos && location.size() >= colon + 3 && location.back() == ')') {
    const std::string_view first_line = location.substr(colon + 1, location.size() - colon - 2);
    bool digits = true;
    for (char c : first_line) digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
    if (digits) return absl::StrFormat("%s%d)", location.substr(0, colon + 1), line);
  }
  return absl::StrFormat("%s line %d", location, line);
}

void WriteFoldedStacks(const RunReport& report, std::ostream& out) {
  // (process frame, operation, category, line frame or "") -> ns; CPU and
  // CPU+GPU rows merge here.
  std::map<std::tuple<int, std::string, std::string_view, std::string>, int64_t> stacks;
  std::map<int, std::string> process_frames;
  for (const ProcessReport& process : report.processes) {
    process_frames.try_emplace(process.pid, FoldedFrame(ProcessLabel(process.argv, process.executable, process.pid)));
    for (const LocatedRow& row : process.located_rows) {
      if (row.resource == Resource::kGpu || row.ns <= 0) continue;
      std::string frame = row.location.empty() ? "" : FoldedFrame(LineFrame(row.location, row.line));
      stacks[{process.pid, row.operation, CategoryName(row.category), std::move(frame)}] += row.ns;
    }
  }
  for (const auto& [key, ns] : stacks) {
    const auto& [pid, operation, category, line] = key;
    out << process_frames.at(pid) << ';' << FoldedFrame(operation) << ';' << FoldedFrame(category);
    if (!line.empty()) out << ';' << line;
    out << ' ' << ns << '\n';
  }
}

}  // namespace rlscope::report
