#include "report/overlap_sweep.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace rlscope::report {

namespace {

constexpr int64_t kNeverNs = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxOverlapStreams = 64;

// One stream's read position; raw pointers keep the k-way loop tight.
struct StreamCursor {
  const Interval* current;
  const Interval* end;
};

// Moves `cursor` past intervals that are over at `now_ns`, sets `label` to
// what the stream has at `now_ns`, and returns the stream's next boundary
// after `now_ns` (kNeverNs when exhausted). The skip is a loop rather than
// one step so zero-length intervals cannot stall the sweep.
int64_t AdvanceTo(StreamCursor& cursor, int64_t now_ns, int32_t& label) {
  while (cursor.current != cursor.end && cursor.current->end_ns <= now_ns) ++cursor.current;
  if (cursor.current == cursor.end) {
    label = kNoLabel;
    return kNeverNs;
  }
  if (cursor.current->begin_ns <= now_ns) {
    label = cursor.current->label;
    return cursor.current->end_ns;
  }
  label = kNoLabel;
  return cursor.current->begin_ns;
}

}  // namespace

// Each step does O(k) work and ends at the smallest next boundary, which is
// always > now (every cursor interval ends after now), so the sweep makes
// progress even on input that breaks the sorted/disjoint contract.
void SweepStreams(std::span<const IntervalList> streams, const SegmentVisitor& visit) {
  const size_t stream_count = streams.size();
  std::vector<StreamCursor> cursors(stream_count);
  std::vector<int32_t> labels(stream_count, kNoLabel);
  int64_t now_ns = kNeverNs;
  for (size_t i = 0; i < stream_count; ++i) {
    cursors[i] = StreamCursor{streams[i].data(), streams[i].data() + streams[i].size()};
    if (!streams[i].empty()) now_ns = std::min(now_ns, streams[i].front().begin_ns);
  }
  while (now_ns != kNeverNs) {
    int64_t next_ns = kNeverNs;
    bool any_active = false;
    for (size_t i = 0; i < stream_count; ++i) {
      next_ns = std::min(next_ns, AdvanceTo(cursors[i], now_ns, labels[i]));
      any_active |= labels[i] != kNoLabel;
    }
    // Any active stream bounds next_ns by its end, so next_ns is finite here.
    if (any_active) visit(now_ns, next_ns, std::span<const int32_t>(labels));
    now_ns = next_ns;
  }
}

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
