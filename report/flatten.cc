#include "report/flatten.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "report/nearly_sorted.h"

namespace rlscope::report {

namespace {

// Appends [begin_ns, end_ns) with `label`, extending the last piece instead
// when it touches and carries the same label (output must be merged).
void AppendMerged(IntervalList& out, int64_t begin_ns, int64_t end_ns, int32_t label) {
  if (!out.empty() && out.back().end_ns == begin_ns && out.back().label == label) {
    out.back().end_ns = end_ns;
    return;
  }
  out.push_back(Interval{begin_ns, end_ns, label});
}

// Drops empty and negative intervals in place (order kept, so the input-order
// tie-break still works) and reports whether what is left is sorted by begin
// and pairwise disjoint. One pass: the check is nearly free.
bool DropEmptyAndCheckSortedDisjoint(IntervalList& intervals) {
  bool sorted_disjoint = true;
  size_t kept = 0;
  for (const Interval& interval : intervals) {
    if (interval.end_ns <= interval.begin_ns) continue;
    if (kept > 0 && interval.begin_ns < intervals[kept - 1].end_ns) sorted_disjoint = false;
    intervals[kept++] = interval;
  }
  intervals.resize(kept);
  return sorted_disjoint;
}

// Fast path: already disjoint, so flattening is only merging touching pieces
// with equal labels; done in place, no allocation.
void MergeTouchingInPlace(IntervalList& intervals) {
  size_t kept = 0;
  for (const Interval& interval : intervals) {
    if (kept > 0 && intervals[kept - 1].end_ns == interval.begin_ns && intervals[kept - 1].label == interval.label) {
      intervals[kept - 1].end_ns = interval.end_ns;
      continue;
    }
    intervals[kept++] = interval;
  }
  intervals.resize(kept);
}

// An active interval; its label is all we need once it wins.
struct ActiveEntry {
  int64_t end_ns;
  int32_t label;
};

// Intervals start in OuterFirst order, so each new one outranks every active
// one: a max-heap keyed by innermost-ness degenerates to a stack. Intervals
// that end under a more inner one are not removed when they end but popped
// once they surface (lazy deletion); an occasional order-keeping compaction
// keeps the stack within about twice the number of live entries.
class ActiveStack {
 public:
  void Push(int64_t end_ns, int32_t label) { entries_.push_back(ActiveEntry{end_ns, label}); }

  // Drops what is over at now_ns and returns the winner, or nullptr.
  const ActiveEntry* Top(int64_t now_ns) {
    while (!entries_.empty() && entries_.back().end_ns <= now_ns) entries_.pop_back();
    if (entries_.size() >= compact_at_) Compact(now_ns);
    return entries_.empty() ? nullptr : &entries_.back();
  }

 private:
  static constexpr size_t kMinCompactAt = 1024;

  void Compact(int64_t now_ns) {
    std::erase_if(entries_, [now_ns](const ActiveEntry& e) { return e.end_ns <= now_ns; });
    compact_at_ = std::max(kMinCompactAt, 2 * entries_.size());  // amortised O(1) per push
  }

  std::vector<ActiveEntry> entries_;
  size_t compact_at_ = kMinCompactAt;
};

// General path over OuterFirst-sorted input: every step either starts an
// interval or expires the winner, so after the sort this is O(n).
IntervalList FlattenGeneral(const IntervalList& sorted) {
  const size_t count = sorted.size();
  IntervalList out;
  out.reserve(count);
  ActiveStack active;
  size_t next = 0;
  int64_t now_ns = sorted[0].begin_ns;
  while (true) {
    // Invariant: now_ns <= sorted[next].begin_ns, so this admits begins == now_ns.
    for (; next < count && sorted[next].begin_ns <= now_ns; ++next) {
      active.Push(sorted[next].end_ns, sorted[next].label);
    }
    const ActiveEntry* winner = active.Top(now_ns);
    if (winner == nullptr) {
      if (next == count) break;
      now_ns = sorted[next].begin_ns;  // gap: nothing active until the next begin
      continue;
    }
    int64_t until_ns = winner->end_ns;
    if (next < count && sorted[next].begin_ns < until_ns) until_ns = sorted[next].begin_ns;
    AppendMerged(out, now_ns, until_ns, winner->label);
    now_ns = until_ns;
  }
  return out;
}

}  // namespace

// A larger position means a more inner interval: later begin, then (same
// begin) earlier end.
bool OuterFirst(const Interval& a, const Interval& b) {
  if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
  return a.end_ns > b.end_ns;
}

void SortOuterFirst(IntervalList& intervals) {
  // Decoded events come as they ended: an enclosing call right after the
  // few it holds.
  SortNearlySorted(intervals.begin(), intervals.end(), OuterFirst);
}

// Tie-break among intervals with identical begin and end: the one appearing
// later in the input wins (e.g. the most recently recorded of duplicates).
IntervalList FlattenInnermost(IntervalList intervals) {
  if (DropEmptyAndCheckSortedDisjoint(intervals)) {
    MergeTouchingInPlace(intervals);
    return intervals;
  }
  // Input already in OuterFirst order (nested ranges recorded at push,
  // decoded CPU events) skips the sort.
  SortOuterFirst(intervals);
  return FlattenGeneral(intervals);
}

bool IsFlat(const IntervalList& intervals) {
  for (size_t i = 0; i < intervals.size(); ++i) {
    if (intervals[i].end_ns <= intervals[i].begin_ns) return false;
    if (i > 0 && intervals[i].begin_ns < intervals[i - 1].end_ns) return false;
  }
  return true;
}

IntervalList FlattenInnermostOf(const IntervalList& intervals) {
  // Decoded CPU events are in OuterFirst order with none empty: flattened
  // as they are. Anything else goes through FlattenInnermost's copy.
  bool in_place = !intervals.empty();
  for (size_t i = 0; i < intervals.size() && in_place; ++i) {
    in_place = intervals[i].end_ns > intervals[i].begin_ns && (i == 0 || !OuterFirst(intervals[i], intervals[i - 1]));
  }
  return in_place ? FlattenGeneral(intervals) : FlattenInnermost(intervals);
}

}  // namespace rlscope::report
