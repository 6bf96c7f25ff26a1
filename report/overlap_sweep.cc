#include "report/overlap_sweep.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace rlscope::report {

namespace {

constexpr size_t kMaxOverlapStreams = 64;

}  // namespace

// More than 64 streams cannot be keyed by a 64-bit mask; rather than
// silently dropping streams we return an empty map, which callers can test.
std::map<uint64_t, int64_t> ComputeOverlapBySet(std::span<const IntervalList> streams) {
  std::map<uint64_t, int64_t> time_by_set_ns;
  if (streams.size() > kMaxOverlapStreams) return time_by_set_ns;
  std::vector<IntervalList> unions;
  unions.reserve(streams.size());
  for (const IntervalList& stream : streams) unions.push_back(UnionIntervals(stream));
  // Summing into a flat scratch first would need 2^k slots; a map lookup per
  // segment is fine since k is small and distinct sets are few.
  SweepStreams(unions, [&](int64_t begin_ns, int64_t end_ns, std::span<const int32_t> labels) {
    uint64_t set = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] != kNoLabel) set |= uint64_t{1} << i;
    }
    time_by_set_ns[set] += end_ns - begin_ns;
  });
  return time_by_set_ns;
}

// Touching intervals are merged too: the result is the canonical cover.
IntervalList UnionIntervals(IntervalList intervals) {
  auto by_begin = [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; };
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_begin)) {
    std::sort(intervals.begin(), intervals.end(), by_begin);
  }
  size_t kept = 0;
  for (const Interval& interval : intervals) {
    if (interval.end_ns <= interval.begin_ns) continue;  // covers nothing
    if (kept > 0 && interval.begin_ns <= intervals[kept - 1].end_ns) {
      intervals[kept - 1].end_ns = std::max(intervals[kept - 1].end_ns, interval.end_ns);
      continue;
    }
    intervals[kept++] = Interval{interval.begin_ns, interval.end_ns, 0};
  }
  intervals.resize(kept);
  return intervals;
}

}  // namespace rlscope::report
