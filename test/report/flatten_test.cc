#include "report/flatten.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <random>

namespace rlscope::report {
namespace {

constexpr int32_t kOuter = 1;
constexpr int32_t kMiddle = 2;
constexpr int32_t kInner = 3;

// Reference: applies the innermost rule at every integer instant t (the unit
// span [t, t + 1)), then merges equal neighbours. Only valid for small
// integer coordinates in [0, horizon_ns).
IntervalList BruteForceFlatten(const IntervalList& intervals, int64_t horizon_ns) {
  IntervalList out;
  for (int64_t t = 0; t < horizon_ns; ++t) {
    const Interval* winner = nullptr;
    for (const Interval& candidate : intervals) {
      if (!(candidate.begin_ns <= t && t < candidate.end_ns)) continue;
      // `>=` on the final tie makes the later input element win.
      if (winner == nullptr || candidate.begin_ns > winner->begin_ns ||
          (candidate.begin_ns == winner->begin_ns && candidate.end_ns < winner->end_ns) ||
          (candidate.begin_ns == winner->begin_ns && candidate.end_ns == winner->end_ns)) {
        winner = &candidate;
      }
    }
    if (winner == nullptr) continue;
    if (!out.empty() && out.back().end_ns == t && out.back().label == winner->label) {
      out.back().end_ns = t + 1;
    } else {
      out.push_back(Interval{t, t + 1, winner->label});
    }
  }
  return out;
}

int64_t CoveredUnits(const IntervalList& intervals, int64_t horizon_ns) {
  int64_t covered_ns = 0;
  for (int64_t t = 0; t < horizon_ns; ++t) {
    covered_ns += std::any_of(intervals.begin(), intervals.end(),
                              [t](const Interval& i) { return i.begin_ns <= t && t < i.end_ns; });
  }
  return covered_ns;
}

int64_t TotalDuration(const IntervalList& intervals) {
  int64_t total_ns = 0;
  for (const Interval& interval : intervals) total_ns += interval.duration_ns();
  return total_ns;
}

void RequireWellFormed(const IntervalList& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    REQUIRE(out[i].begin_ns < out[i].end_ns);
    if (i == 0) continue;
    REQUIRE(out[i - 1].end_ns <= out[i].begin_ns);
    const bool touching_same_label = out[i - 1].end_ns == out[i].begin_ns && out[i - 1].label == out[i].label;
    REQUIRE_FALSE(touching_same_label);
  }
}

// Sorted, pairwise disjoint (touching allowed), few labels so merges happen.
IntervalList RandomSortedDisjoint(std::mt19937& rng, int64_t horizon_ns) {
  IntervalList out;
  int64_t t = 0;
  while (true) {
    t += std::uniform_int_distribution<int64_t>(0, 3)(rng);
    const int64_t length_ns = std::uniform_int_distribution<int64_t>(1, 5)(rng);
    if (t + length_ns > horizon_ns) break;
    out.push_back(Interval{t, t + length_ns, std::uniform_int_distribution<int32_t>(0, 2)(rng)});
    t += length_ns;
  }
  return out;
}

// Any order and overlap, including empty/negative and duplicated spans.
IntervalList RandomOverlapping(std::mt19937& rng, int64_t horizon_ns) {
  const int count = std::uniform_int_distribution<int>(0, 12)(rng);
  std::uniform_int_distribution<int64_t> coordinate(0, horizon_ns);
  IntervalList out;
  for (int i = 0; i < count; ++i) {
    const int32_t label = std::uniform_int_distribution<int32_t>(0, 3)(rng);
    if (!out.empty() && std::uniform_int_distribution<int>(0, 5)(rng) == 0) {
      out.push_back(Interval{out.back().begin_ns, out.back().end_ns, label});
      continue;
    }
    const int64_t a = coordinate(rng);
    const int64_t b = std::uniform_int_distribution<int>(0, 9)(rng) == 0 ? a : coordinate(rng);
    out.push_back(Interval{std::min(a, b), std::max(a, b), label});
  }
  return out;
}

TEST_CASE("FlattenInnermost returns nothing for empty input", "[flatten]") { CHECK(FlattenInnermost({}).empty()); }

TEST_CASE("FlattenInnermost lets a nested interval win and the outer resume after it ends", "[flatten]") {
  const IntervalList out = FlattenInnermost({{0, 10, kOuter}, {2, 5, kInner}});
  CHECK(out == IntervalList{{0, 2, kOuter}, {2, 5, kInner}, {5, 10, kOuter}});
}

TEST_CASE("FlattenInnermost resumes the right level after three nested levels unwind", "[flatten]") {
  const IntervalList out = FlattenInnermost({{0, 20, kOuter}, {2, 15, kMiddle}, {5, 8, kInner}});
  CHECK(out == IntervalList{{0, 2, kOuter}, {2, 5, kMiddle}, {5, 8, kInner}, {8, 15, kMiddle}, {15, 20, kOuter}});
}

TEST_CASE("FlattenInnermost gives partially overlapping intervals to the later-started one", "[flatten]") {
  const IntervalList out = FlattenInnermost({{0, 6, kOuter}, {4, 10, kInner}});
  CHECK(out == IntervalList{{0, 4, kOuter}, {4, 10, kInner}});
}

TEST_CASE("FlattenInnermost skips an interval that ended while a more inner one was active", "[flatten]") {
  // kMiddle ends at 10 under kInner; after kInner ends, kOuter must resume.
  const IntervalList out = FlattenInnermost({{0, 20, kOuter}, {2, 10, kMiddle}, {5, 15, kInner}});
  CHECK(out == IntervalList{{0, 2, kOuter}, {2, 5, kMiddle}, {5, 15, kInner}, {15, 20, kOuter}});
}

TEST_CASE("FlattenInnermost keeps live outer intervals when many inner ones end under others", "[flatten]") {
  // Each staircase step ends under the next one, so thousands of finished
  // entries pile up under the winner; the outer one must still resume.
  constexpr int32_t kSteps = 5000;
  IntervalList input = {{0, 20000, kOuter}};
  IntervalList expected = {{0, 10, kOuter}};
  for (int32_t i = 0; i < kSteps; ++i) {
    input.push_back(Interval{10 + i, 12 + i, 100 + i});
    expected.push_back(Interval{10 + i, i + 1 < kSteps ? 11 + i : 12 + i, 100 + i});
  }
  expected.push_back(Interval{11 + kSteps, 20000, kOuter});
  CHECK(FlattenInnermost(input) == expected);
}

TEST_CASE("FlattenInnermost breaks a tie on begin in favour of the earlier end", "[flatten]") {
  const IntervalList out = FlattenInnermost({{0, 4, kInner}, {0, 10, kOuter}});
  CHECK(out == IntervalList{{0, 4, kInner}, {4, 10, kOuter}});
}

TEST_CASE("FlattenInnermost gives identical intervals to the one later in the input", "[flatten]") {
  CHECK(FlattenInnermost({{0, 5, kOuter}, {0, 5, kInner}}) == IntervalList{{0, 5, kInner}});
  CHECK(FlattenInnermost({{0, 5, kInner}, {0, 5, kOuter}}) == IntervalList{{0, 5, kOuter}});
}

TEST_CASE("FlattenInnermost ignores zero-length and negative-length intervals", "[flatten]") {
  const IntervalList out = FlattenInnermost({{3, 3, kInner}, {0, 10, kOuter}, {6, 4, kInner}, {7, 7, kMiddle}});
  CHECK(out == IntervalList{{0, 10, kOuter}});
  CHECK(FlattenInnermost({{5, 5, kInner}, {9, 1, kOuter}}).empty());
}

TEST_CASE("FlattenInnermost accepts unsorted input", "[flatten]") {
  const IntervalList out = FlattenInnermost({{5, 8, kInner}, {20, 30, kMiddle}, {0, 20, kOuter}, {2, 15, kMiddle}});
  CHECK(out ==
        IntervalList{
            {0, 2, kOuter}, {2, 5, kMiddle}, {5, 8, kInner}, {8, 15, kMiddle}, {15, 20, kOuter}, {20, 30, kMiddle}});
}

TEST_CASE("FlattenInnermost merges touching pieces with the same label but keeps gaps", "[flatten]") {
  // Sorted and disjoint: takes the fast path.
  const IntervalList out = FlattenInnermost({{0, 5, kOuter}, {5, 8, kOuter}, {8, 9, kInner}, {12, 14, kInner}});
  CHECK(out == IntervalList{{0, 8, kOuter}, {8, 9, kInner}, {12, 14, kInner}});
  // Through the general path: the inner piece carries the outer's label.
  CHECK(FlattenInnermost({{0, 10, kOuter}, {3, 4, kOuter}}) == IntervalList{{0, 10, kOuter}});
}

TEST_CASE("FlattenInnermost matches a per-instant brute force on random overlapping input", "[flatten][property]") {
  constexpr int64_t kHorizonNs = 40;
  std::mt19937 rng(20240601);
  for (int trial = 0; trial < 400; ++trial) {
    const IntervalList input = RandomOverlapping(rng, kHorizonNs);
    INFO("trial " << trial);
    const IntervalList out = FlattenInnermost(input);
    REQUIRE(out == BruteForceFlatten(input, kHorizonNs));
    RequireWellFormed(out);
    // Total time conservation: the flattened pieces cover exactly the union.
    REQUIRE(TotalDuration(out) == CoveredUnits(input, kHorizonNs));
  }
}

TEST_CASE("FlattenInnermost matches the brute force on large inputs with many short intervals", "[flatten][property]") {
  // Thousands of overlapping spans exercise the active stack's compaction.
  constexpr int64_t kHorizonNs = 3000;
  std::mt19937 rng(31337);
  std::uniform_int_distribution<int64_t> begin(0, kHorizonNs - 1);
  std::uniform_int_distribution<int64_t> length(0, 40);
  std::uniform_int_distribution<int32_t> label(0, 5);
  for (int trial = 0; trial < 5; ++trial) {
    IntervalList input;
    for (int i = 0; i < 4000; ++i) {
      const int64_t begin_ns = begin(rng);
      input.push_back(Interval{begin_ns, std::min(kHorizonNs, begin_ns + length(rng)), label(rng)});
    }
    INFO("trial " << trial);
    const IntervalList out = FlattenInnermost(input);
    REQUIRE(out == BruteForceFlatten(input, kHorizonNs));
    RequireWellFormed(out);
  }
}

TEST_CASE("FlattenInnermost fast path on sorted disjoint input agrees with the general path", "[flatten][property]") {
  constexpr int64_t kHorizonNs = 60;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const IntervalList sorted = RandomSortedDisjoint(rng, kHorizonNs);
    INFO("trial " << trial);
    const IntervalList fast = FlattenInnermost(sorted);
    REQUIRE(fast == BruteForceFlatten(sorted, kHorizonNs));
    RequireWellFormed(fast);
    REQUIRE(TotalDuration(fast) == TotalDuration(sorted));
    // Reversed, two or more disjoint spans are unsorted: forces the general path.
    if (sorted.size() < 2) continue;
    IntervalList reversed(sorted.rbegin(), sorted.rend());
    REQUIRE(FlattenInnermost(reversed) == fast);
  }
}

TEST_CASE("FlattenInnermostOf gives FlattenInnermost's answer and leaves its input as it was", "[flatten][property]") {
  constexpr int64_t kHorizonNs = 40;
  std::mt19937 rng(99);
  for (int trial = 0; trial < 600; ++trial) {
    // Every shape: overlapping, sorted disjoint, and each in OuterFirst
    // order (the general path read in place), with and without empties.
    IntervalList input = trial % 3 == 0 ? RandomSortedDisjoint(rng, kHorizonNs) : RandomOverlapping(rng, kHorizonNs);
    if (trial % 3 == 1) SortOuterFirst(input);
    const IntervalList before = input;
    INFO("trial " << trial);
    REQUIRE(FlattenInnermostOf(input) == FlattenInnermost(input));
    REQUIRE(input == before);
  }
}

TEST_CASE("IsFlat: sorted, disjoint, nothing empty", "[flatten]") {
  CHECK(IsFlat({}));
  CHECK(IsFlat({{0, 5, kOuter}, {5, 8, kOuter}, {9, 10, kInner}}));  // Touching pieces may share a label.
  CHECK_FALSE(IsFlat({{0, 5, kOuter}, {4, 8, kInner}}));             // Overlap.
  CHECK_FALSE(IsFlat({{6, 8, kOuter}, {0, 5, kInner}}));             // Unsorted.
  CHECK_FALSE(IsFlat({{0, 5, kOuter}, {7, 7, kInner}}));             // Empty.
  // Flat input needs no flattening: the sweep's sums are the same.
  const IntervalList flat = {{0, 5, kOuter}, {5, 8, kOuter}, {9, 10, kInner}};
  CHECK(TotalDuration(FlattenInnermost(flat)) == TotalDuration(flat));
}

}  // namespace
}  // namespace rlscope::report
