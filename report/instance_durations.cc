#include "report/instance_durations.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace rlscope::report {

std::map<int32_t, std::vector<int64_t>> InstanceDurations(const IntervalList& timeline, IntervalList starts,
                                                          const IntervalList* counted) {
  std::sort(starts.begin(), starts.end(), [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  std::map<int32_t, std::vector<int64_t>> start_times;
  for (const Interval& start : starts) start_times[start.label].push_back(start.begin_ns);
  std::map<int32_t, std::vector<int64_t>> durations;
  // The instance each operation's time goes to so far: the timeline is
  // sorted, so each operation's cursor only moves forward.
  std::map<int32_t, size_t> current;
  for (const auto& [label, times] : start_times) {
    durations[label].assign(times.size(), 0);
    current[label] = 0;
  }
  for (const Interval& piece : timeline) {
    const auto found = start_times.find(piece.label);
    if (found == start_times.end()) continue;
    const std::vector<int64_t>& times = found->second;
    std::vector<int64_t>& owned = durations[piece.label];
    size_t& instance = current[piece.label];
    int64_t begin = piece.begin_ns;
    while (begin < piece.end_ns) {
      while (instance + 1 < times.size() && times[instance + 1] <= begin) ++instance;
      const int64_t next = instance + 1 < times.size() ? times[instance + 1] : piece.end_ns;
      const int64_t end = std::min(piece.end_ns, next);  // next > begin: the loop above.
      owned[instance] += end - begin;
      begin = end;
    }
  }
  if (counted != nullptr) {
    for (auto& [label, owned] : durations) {
      const std::vector<int64_t>& times = start_times[label];
      size_t kept = 0;
      for (size_t i = 0; i < owned.size(); ++i) {
        if (Covers(*counted, times[i])) owned[kept++] = owned[i];
      }
      owned.resize(kept);
    }
    std::erase_if(durations, [](const auto& entry) { return entry.second.empty(); });
  }
  return durations;
}

InstanceStats SummariseInstances(std::string operation, std::vector<int64_t> durations) {
  InstanceStats stats;
  stats.operation = std::move(operation);
  stats.instances = durations.size();
  if (durations.empty()) return stats;
  std::sort(durations.begin(), durations.end());
  for (const int64_t ns : durations) stats.total_ns += ns;
  const size_t count = durations.size();
  stats.mean_ns = static_cast<int64_t>(std::llround(static_cast<double>(stats.total_ns) / static_cast<double>(count)));
  // Nearest rank ceil(count * percent / 100), in integers (no rounding up
  // of 0.95 * 20 to 20 by floating point).
  const auto rank = [&](size_t percent) { return durations[std::max<size_t>((count * percent + 99) / 100, 1) - 1]; };
  stats.p50_ns = rank(50);
  stats.p95_ns = rank(95);
  stats.max_ns = durations.back();
  return stats;
}

}  // namespace rlscope::report
