// FlattenInnermost: turns possibly nested or overlapping labelled intervals
// into disjoint ones where, at every instant, the innermost interval wins.
// "Innermost" is the active interval that started last; among those that
// started together, the one that ends first (RL-Scope's EventFlattener rule).
// Identical spans (same begin and end): the one later in the input wins.
// Used for operations (nested NVTX ranges) and for CPU categories (a CUDA
// call inside a backend call is CUDA API time).
#ifndef RLSCOPE_REPORT_FLATTEN_H_
#define RLSCOPE_REPORT_FLATTEN_H_

#include "report/interval.h"

namespace rlscope::report {

// Input: any order, any overlap; zero-length intervals are ignored.
// Output: sorted by begin, pairwise disjoint, adjacent pieces with the same
// label merged. Total covered time equals the union of the input.
IntervalList FlattenInnermost(IntervalList intervals);

// IsFlat: whether `intervals` is already FlattenInnermost's output but
// for touching pieces with one label left unmerged: none empty, sorted by
// begin, pairwise disjoint. A sweep can read such a list as it is.
bool IsFlat(const IntervalList& intervals);

// FlattenInnermostOf: the same, leaving `intervals` as it is. Input in
// OuterFirst order with no empty interval (a thread's decoded CPU events)
// is read in place; other input is copied first. For input IsFlat accepts,
// read the list itself instead.
IntervalList FlattenInnermostOf(const IntervalList& intervals);

// OuterFirst: the order FlattenInnermost works in: by begin, and at one
// begin the longer (enclosing) interval first.
bool OuterFirst(const Interval& a, const Interval& b);

// SortOuterFirst: into OuterFirst order, stably, so identical spans keep
// their input order (the later one stays the innermost). Decoding leaves a
// thread's CPU events in this order, so the passes after it (flattening,
// transitions, unions) find them sorted instead of sorting each time.
void SortOuterFirst(IntervalList& intervals);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_FLATTEN_H_
