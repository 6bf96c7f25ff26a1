#include "process_timeline.h"

#include <algorithm>

namespace rlscope::report {

int32_t NameTable::Intern(std::string_view name) {
  auto it = labels_.find(absl::string_view(name.data(), name.size()));  // Debian's absl::string_view is not std::string_view.
  if (it != labels_.end()) return it->second;
  const auto label = static_cast<int32_t>(names_.size());
  names_.emplace_back(name);
  labels_.emplace(names_.back(), label);
  return label;
}

void MergeExecChain(ProcessTimeline& earlier, ProcessTimeline&& later) {
  earlier.executable = std::move(later.executable);
  earlier.argv = std::move(later.argv);
  earlier.begin_ns = std::min(earlier.begin_ns, later.begin_ns);
  earlier.end_ns = std::max(earlier.end_ns, later.end_ns);
  earlier.ended_cleanly = later.ended_cleanly;
  earlier.recorded_events += later.recorded_events;
  earlier.dropped_events += later.dropped_events;
  for (auto& [tid, thread] : later.threads) {
    auto [it, inserted] = earlier.threads.try_emplace(tid, std::move(thread));
    if (inserted) continue;
    ThreadTimeline& into = it->second;
    into.begin_ns = std::min(into.begin_ns, thread.begin_ns);
    into.end_ns = std::max(into.end_ns, thread.end_ns);
    if (!thread.name.empty()) into.name = thread.name;
    into.operations.insert(into.operations.end(), thread.operations.begin(), thread.operations.end());
    into.cpu_events.insert(into.cpu_events.end(), thread.cpu_events.begin(), thread.cpu_events.end());
    into.events += thread.events;
    into.dropped += thread.dropped;
    into.cuda_api_calls += thread.cuda_api_calls;
  }
  for (std::string& problem : later.problems) earlier.problems.push_back(std::move(problem));
}

}  // namespace rlscope::report
