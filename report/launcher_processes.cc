#include "report/launcher_processes.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <unordered_map>

namespace rlscope::report {

namespace {

bool HasOperations(const ProcessTimeline& process) {
  for (const ThreadTimeline& thread : process.threads) {
    if (!thread.operations.empty() || !thread.inferred_operations.empty()) return true;
  }
  return false;
}

// StartedBy: whether `child` was started by `parent`: its parent pid (or,
// for a fork without exec, the process it was forked from) and a start
// within the parent's life (pids are reused).
bool StartedBy(const ProcessTimeline& child, const ProcessTimeline& parent) {
  if (&child == &parent) return false;
  const bool named = child.ppid == parent.pid || child.forked_from == parent.pid;
  return named && child.begin_ns >= parent.begin_ns && child.begin_ns <= parent.end_ns;
}

}  // namespace

void MarkLaunchers(std::vector<ProcessTimeline>& processes, NameTable& names) {
  const size_t n = processes.size();
  // Parents looked up by pid: a run may hold thousands of short-lived
  // processes (a helper command started every episode).
  std::unordered_multimap<int, size_t> by_pid;
  for (size_t p = 0; p < n; ++p) by_pid.emplace(processes[p].pid, p);
  std::vector<std::vector<size_t>> children(n);
  for (size_t c = 0; c < n; ++c) {
    const ProcessTimeline& child = processes[c];
    std::vector<size_t> parents;
    for (const int pid : {child.ppid, child.forked_from}) {
      const auto [first, last] = by_pid.equal_range(pid);
      for (auto it = first; it != last; ++it) {
        if (StartedBy(child, processes[it->second])) parents.push_back(it->second);
      }
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    for (size_t p : parents) children[p].push_back(c);
  }
  // Below[p]: some process p started, directly or through others, has
  // operations. Memoised depth-first; a (corrupt) cycle ends at `visiting`.
  enum class State { kUnknown, kVisiting, kNo, kYes };
  std::vector<State> below(n, State::kUnknown);
  std::function<bool(size_t)> operations_below = [&](size_t p) {
    if (below[p] == State::kVisiting) return false;
    if (below[p] != State::kUnknown) return below[p] == State::kYes;
    below[p] = State::kVisiting;
    bool found = false;
    for (size_t c : children[p]) found = found || HasOperations(processes[c]) || operations_below(c);
    below[p] = found ? State::kYes : State::kNo;
    return found;
  };
  std::vector<bool> launcher(n, false);
  for (size_t p = 0; p < n; ++p) launcher[p] = !HasOperations(processes[p]) && operations_below(p);
  const int32_t label = names.Intern(kLauncherOperation);
  for (size_t p = 0; p < n; ++p) {
    if (!launcher[p]) continue;
    for (ThreadTimeline& thread : processes[p].threads) {
      if (thread.end_ns <= thread.begin_ns) continue;
      thread.inferred_operations.push_back({thread.begin_ns, thread.end_ns, label});
      AddInstance(thread, label, thread.begin_ns);
    }
  }
}

}  // namespace rlscope::report
