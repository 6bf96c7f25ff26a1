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

#include <cstdint>
#include <functional>
#include <map>
#include <span>

#include "report/interval.h"

namespace rlscope::report {

// Called once per elementary segment with one label per stream.
using SegmentVisitor = std::function<void(int64_t begin_ns, int64_t end_ns, std::span<const int32_t> labels)>;

// Each stream must be sorted by begin and pairwise disjoint (FlattenInnermost
// output, or a union). Runs in O(total intervals x streams).
void SweepStreams(std::span<const IntervalList> streams, const SegmentVisitor& visit);

// ComputeOverlapBySet: time per set of active streams (bit i = stream i),
// for at most 64 streams (more: returns an empty map). Each stream's intervals
// may overlap each other (they are unioned first); labels are ignored.
std::map<uint64_t, int64_t> ComputeOverlapBySet(std::span<const IntervalList> streams);

// UnionIntervals: sorted, disjoint cover of the input (labels dropped to 0).
IntervalList UnionIntervals(IntervalList intervals);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_OVERLAP_SWEEP_H_
