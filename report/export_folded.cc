#include "export_folded.h"

#include <map>
#include <tuple>

#include "absl/strings/str_format.h"

namespace rlscope::report {

std::string FoldedFrame(std::string_view name) {
  std::string frame(name);
  for (char& c : frame) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return frame;
}

namespace {

std::string ProcessFrame(const RunReport& report, int pid) {
  for (const ProcessReport& process : report.processes) {
    if (process.pid != pid) continue;
    std::string path = !process.argv.empty() ? process.argv[0] : process.executable;
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos) path = path.substr(slash + 1);
    if (!path.empty()) return FoldedFrame(absl::StrFormat("%s (pid %d)", path, pid));
  }
  return absl::StrFormat("pid %d", pid);
}

}  // namespace

void WriteFoldedStacks(const RunReport& report, std::ostream& out) {
  std::map<std::tuple<int, std::string, std::string_view>, int64_t> stacks;
  for (const BreakdownRow& row : report.rows) {
    if (row.resource == Resource::kGpu || row.ns <= 0) continue;
    stacks[{row.pid, row.operation, CategoryName(row.category)}] += row.ns;
  }
  std::map<int, std::string> process_frames;
  for (const auto& [key, ns] : stacks) {
    const auto& [pid, operation, category] = key;
    auto [frame, inserted] = process_frames.try_emplace(pid);
    if (inserted) frame->second = ProcessFrame(report, pid);
    out << frame->second << ';' << FoldedFrame(operation) << ';' << FoldedFrame(category) << ' ' << ns << '\n';
  }
}

}  // namespace rlscope::report
