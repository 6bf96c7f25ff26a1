#include "report/lost_processes.h"

#include <algorithm>
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

// How many lost children of one kind are named one by one.
constexpr size_t kMaxLostNamedEach = 3;
constexpr char kWhyLost[] =
    "killed before the first flush, could not reach the collector, or could not load rlscope's preload (a static "
    "or setuid program)";

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
    // Lost children grouped by how they started and what they run, in
    // order of first appearance: a compiler spawned 300 times (a static
    // program cannot load the preload) is one line, not 300.
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (int pid : order) {
      const ChildStart& child = *last[pid];
      if (child.how == ChildStartKind::kExecFailed || streamed.count(pid) != 0) continue;
      const std::string how = absl::StrFormat("%s%s by process %d, %s", HowStarted(child.how),
                                              child.program.empty() ? "" : absl::StrFormat(" to run %s", child.program),
                                              parent.pid, CommandOf(parent));
      auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == how; });
      if (group == groups.end()) group = groups.insert(groups.end(), {how, {}});
      group->second.push_back(pid);
    }
    for (const auto& [how, pids] : groups) {
      if (pids.size() <= kMaxLostNamedEach) {
        for (int pid : pids) {
          problems.push_back(
              absl::StrFormat("process %d (%s) sent nothing, so it is not in the report: %s", pid, how, kWhyLost));
        }
        continue;
      }
      std::vector<std::string> named;
      for (size_t i = 0; i < kMaxLostNamedEach; ++i) named.push_back(absl::StrFormat("process %d", pids[i]));
      problems.push_back(
          absl::StrFormat("%d processes (%s) sent nothing, so they are not in the report (%s and %d "
                          "more): %s",
                          pids.size(), how, absl::StrJoin(named, ", "), pids.size() - kMaxLostNamedEach, kWhyLost));
    }
  }
  return problems;
}

}  // namespace rlscope::report
