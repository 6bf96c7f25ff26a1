// OverlapSweep: RL-Scope's "overlap" computation. Given k streams of
// disjoint labelled intervals, walks every boundary once and reports each
// elementary segment [t0, t1) with the label each stream has there
// (kNoLabel when a stream is inactive). Segments where no stream is active
// are not reported.
//
// Callers turn segments into totals: the breakdown keys them by
// (operation, category, resource); ComputeOverlapBySet keys them by the set
// of active streams (RL-Scope's reference test).
#ifndef RLSCOPE_REPORT_OVERLAP_SWEEP_H_
#define RLSCOPE_REPORT_OVERLAP_SWEEP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "report/interval.h"

namespace rlscope::report {

namespace sweep_detail {

inline constexpr int64_t kNeverNs = INT64_MAX;

// One stream's read position; raw pointers keep the k-way loop tight.
struct StreamCursor {
  const Interval* current;
  const Interval* end;
};

// Moves `cursor` past intervals that are over at `now_ns`, sets `label` to
// what the stream has at `now_ns`, and returns the stream's next boundary
// after `now_ns` (kNeverNs when exhausted). The skip is a loop rather than
// one step so zero-length intervals cannot stall the sweep.
inline int64_t AdvanceTo(StreamCursor& cursor, int64_t now_ns, int32_t& label) {
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

}  // namespace sweep_detail

// SweepStreams: calls `visit(begin_ns, end_ns, std::span<const int32_t>
// labels)` once per elementary segment, with one label per stream. Each
// stream must be sorted by begin and pairwise disjoint (FlattenInnermost
// output, or a union). Runs in O(total intervals x streams). A template, so
// that the visitor (called per segment, millions of times per report)
// inlines: through std::function it was a sixth of the analysis's time.
//
// Each step does O(k) work and ends at the smallest next boundary, which is
// always > now (every cursor interval ends after now), so the sweep makes
// progress even on input that breaks the sorted/disjoint contract.
// The streams are read in place, as views (a thread's own event list can
// be one).
using IntervalSpan = std::span<const Interval>;
template <typename Visit>
void SweepStreams(std::span<const IntervalSpan> streams, Visit&& visit) {
  using sweep_detail::kNeverNs;
  const size_t stream_count = streams.size();
  std::vector<sweep_detail::StreamCursor> cursors(stream_count);
  std::vector<int32_t> labels(stream_count, kNoLabel);
  // Each stream's next boundary: a stream is advanced only when the sweep
  // reaches it (its label holds until then), not at every segment.
  std::vector<int64_t> boundaries(stream_count, INT64_MIN);
  int64_t now_ns = kNeverNs;
  for (size_t i = 0; i < stream_count; ++i) {
    cursors[i] = sweep_detail::StreamCursor{streams[i].data(), streams[i].data() + streams[i].size()};
    if (!streams[i].empty()) now_ns = std::min(now_ns, streams[i].front().begin_ns);
  }
  while (now_ns != kNeverNs) {
    int64_t next_ns = kNeverNs;
    bool any_active = false;
    for (size_t i = 0; i < stream_count; ++i) {
      if (boundaries[i] <= now_ns) boundaries[i] = sweep_detail::AdvanceTo(cursors[i], now_ns, labels[i]);
      next_ns = std::min(next_ns, boundaries[i]);
      any_active |= labels[i] != kNoLabel;
    }
    // Any active stream bounds next_ns by its end, so next_ns is finite here.
    if (any_active) visit(now_ns, next_ns, std::span<const int32_t>(labels));
    now_ns = next_ns;
  }
}

template <typename Visit>
void SweepStreams(std::span<const IntervalList> streams, Visit&& visit) {
  const std::vector<IntervalSpan> views(streams.begin(), streams.end());
  SweepStreams(std::span<const IntervalSpan>(views), std::forward<Visit>(visit));
}

// ComputeOverlapBySet: time per set of active streams (bit i = stream i),
// for at most 64 streams (more: returns an empty map). Each stream's intervals
// may overlap each other (they are unioned first); labels are ignored.
std::map<uint64_t, int64_t> ComputeOverlapBySet(std::span<const IntervalList> streams);

// UnionIntervals: sorted, disjoint cover of the input (labels dropped to 0).
IntervalList UnionIntervals(IntervalList intervals);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_OVERLAP_SWEEP_H_
