#include "lost_processes.h"

#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rlscope::report {

namespace {

std::string CommandOf(const ProcessTimeline& process) {
  if (!process.argv.empty()) return absl::StrJoin(process.argv, " ");
  return process.executable.empty() ? "?" : process.executable;
}

const char* HowStarted(ChildStartKind how) {
  switch (how) {
    case ChildStartKind::kForked: return "forked";
    case ChildStartKind::kExecuted: return "started (vfork + exec)";
    case ChildStartKind::kSpawned: return "spawned";
    case ChildStartKind::kExecFailed: break;
  }
  return "started";
}

}  // namespace

std::vector<std::string> LostChildProblems(const std::vector<ProcessTimeline>& processes) {
  std::set<int> streamed;
  for (const ProcessTimeline& process : processes) streamed.insert(process.pid);
  std::vector<std::string> problems;
  for (const ProcessTimeline& parent : processes) {
    // The last record per child wins: an exec attempt that failed (a PATH
    // search tries several) leaves no child image to expect.
    std::map<int, const ChildStart*> last;
    std::vector<int> order;
    for (const ChildStart& child : parent.children) {
      if (last.emplace(child.pid, &child).second) {
        order.push_back(child.pid);
      } else {
        last[child.pid] = &child;
      }
    }
    for (int pid : order) {
      const ChildStart& child = *last[pid];
      if (child.how == ChildStartKind::kExecFailed || streamed.count(pid) != 0) continue;
      const std::string program = child.program.empty() ? "" : absl::StrFormat(" to run %s", child.program);
      problems.push_back(absl::StrFormat(
          "process %d (%s%s by process %d, %s) sent nothing, so it is not in the report: it was killed before "
          "its first flush, could not reach the collector, or ran without rlscope's preload",
          pid, HowStarted(child.how), program, parent.pid, CommandOf(parent)));
    }
  }
  return problems;
}

}  // namespace rlscope::report
