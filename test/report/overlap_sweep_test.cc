#include "report/overlap_sweep.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <map>
#include <ostream>
#include <random>
#include <vector>

namespace rlscope::report {
namespace {

constexpr uint64_t kA = 1 << 0;
constexpr uint64_t kB = 1 << 1;
constexpr uint64_t kC = 1 << 2;

struct Segment {
  int64_t begin_ns;
  int64_t end_ns;
  std::vector<int32_t> labels;
  friend bool operator==(const Segment&, const Segment&) = default;
};

std::ostream& operator<<(std::ostream& os, const Segment& segment) {
  os << "[" << segment.begin_ns << "," << segment.end_ns << "){";
  for (int32_t label : segment.labels) os << label << ",";
  return os << "}";
}

std::vector<Segment> CollectSegments(const std::vector<IntervalList>& streams) {
  std::vector<Segment> segments;
  SweepStreams(streams, [&](int64_t begin_ns, int64_t end_ns, std::span<const int32_t> labels) {
    segments.push_back(Segment{begin_ns, end_ns, {labels.begin(), labels.end()}});
  });
  return segments;
}

// Reference: the set of streams covering each integer instant, summed.
std::map<uint64_t, int64_t> BruteForceOverlap(const std::vector<IntervalList>& streams, int64_t horizon_ns) {
  std::map<uint64_t, int64_t> time_by_set_ns;
  for (int64_t t = 0; t < horizon_ns; ++t) {
    uint64_t set = 0;
    for (size_t i = 0; i < streams.size(); ++i) {
      for (const Interval& interval : streams[i]) {
        if (interval.begin_ns <= t && t < interval.end_ns) set |= uint64_t{1} << i;
      }
    }
    if (set != 0) ++time_by_set_ns[set];
  }
  return time_by_set_ns;
}

TEST_CASE("ComputeOverlapBySet reproduces RL-Scope's reference overlap case", "[overlap]") {
  const std::vector<IntervalList> streams = {
      {{3, 7, 0}, {8, 10, 0}},
      {{1, 4, 0}, {6, 9, 0}},
      {{2, 5, 0}, {7, 8, 0}, {11, 12, 0}},
  };
  const std::map<uint64_t, int64_t> expected = {
      {kA, 2}, {kB, 1}, {kC, 1}, {kA | kB, 2}, {kA | kC, 1}, {kB | kC, 2}, {kA | kB | kC, 1},
  };
  CHECK(ComputeOverlapBySet(streams) == expected);
}

TEST_CASE("ComputeOverlapBySet unions overlapping intervals within one stream first", "[overlap]") {
  // Stream A's two intervals overlap on [3, 5): that time counts once.
  const std::vector<IntervalList> streams = {{{3, 8, 0}, {0, 5, 0}}, {{6, 10, 0}}};
  const std::map<uint64_t, int64_t> expected = {{kA, 6}, {kA | kB, 2}, {kB, 2}};
  CHECK(ComputeOverlapBySet(streams) == expected);
}

TEST_CASE("ComputeOverlapBySet is empty for no streams or only empty ones or more than 64", "[overlap]") {
  CHECK(ComputeOverlapBySet({}).empty());
  CHECK(ComputeOverlapBySet(std::vector<IntervalList>(3)).empty());
  CHECK(ComputeOverlapBySet(std::vector<IntervalList>(65, IntervalList{{0, 1, 0}})).empty());
}

TEST_CASE("ComputeOverlapBySet uses bit 63 for the 64th stream", "[overlap]") {
  std::vector<IntervalList> streams(64);
  streams[63] = {{0, 4, 0}};
  streams[0] = {{2, 6, 0}};
  const std::map<uint64_t, int64_t> expected = {{uint64_t{1} << 63, 2}, {(uint64_t{1} << 63) | 1, 2}, {1, 2}};
  CHECK(ComputeOverlapBySet(streams) == expected);
}

TEST_CASE("ComputeOverlapBySet matches a per-instant brute force on random streams", "[overlap][property]") {
  constexpr int64_t kHorizonNs = 40;
  std::mt19937 rng(99);
  std::uniform_int_distribution<int64_t> coordinate(0, kHorizonNs);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<IntervalList> streams(std::uniform_int_distribution<size_t>(1, 5)(rng));
    for (IntervalList& stream : streams) {
      const int count = std::uniform_int_distribution<int>(0, 6)(rng);
      for (int i = 0; i < count; ++i) {
        const int64_t a = coordinate(rng);
        const int64_t b = coordinate(rng);
        stream.push_back(Interval{std::min(a, b), std::max(a, b), 0});
      }
    }
    INFO("trial " << trial);
    const std::map<uint64_t, int64_t> by_set = ComputeOverlapBySet(streams);
    REQUIRE(by_set == BruteForceOverlap(streams, kHorizonNs));
  }
}

TEST_CASE("SweepStreams reports each elementary segment with every stream's label and skips gaps", "[sweep]") {
  const std::vector<IntervalList> streams = {
      {{0, 4, 10}, {10, 12, 11}},
      {{2, 6, 20}},
      {{3, 5, 30}, {5, 7, 31}},
  };
  const std::vector<Segment> expected = {
      {0, 2, {10, kNoLabel, kNoLabel}},
      {2, 3, {10, 20, kNoLabel}},
      {3, 4, {10, 20, 30}},
      {4, 5, {kNoLabel, 20, 30}},
      {5, 6, {kNoLabel, 20, 31}},
      {6, 7, {kNoLabel, kNoLabel, 31}},
      // [7, 10): no stream active, not reported.
      {10, 12, {11, kNoLabel, kNoLabel}},
  };
  CHECK(CollectSegments(streams) == expected);
}

TEST_CASE("SweepStreams splits at a boundary even when the labels stay the same", "[sweep]") {
  const std::vector<IntervalList> streams = {{{0, 2, 7}, {2, 4, 7}}};
  const std::vector<Segment> expected = {{0, 2, {7}}, {2, 4, {7}}};
  CHECK(CollectSegments(streams) == expected);
}

TEST_CASE("SweepStreams reports nothing when no stream has an interval", "[sweep]") {
  CHECK(CollectSegments({}).empty());
  CHECK(CollectSegments(std::vector<IntervalList>(3)).empty());
}

TEST_CASE("SweepStreams never reports zero-length segments", "[sweep]") {
  const std::vector<IntervalList> streams = {{{1, 1, 5}, {1, 3, 6}}, {{3, 3, 8}, {3, 4, 9}}};
  const std::vector<Segment> expected = {{1, 3, {6, kNoLabel}}, {3, 4, {kNoLabel, 9}}};
  CHECK(CollectSegments(streams) == expected);
}

TEST_CASE("UnionIntervals sorts, merges overlapping and touching spans and drops labels", "[union]") {
  const IntervalList out = UnionIntervals({{8, 9, 4}, {0, 3, 1}, {2, 5, 2}, {5, 6, 3}, {7, 7, 5}, {12, 10, 6}});
  CHECK(out == IntervalList{{0, 6, 0}, {8, 9, 0}});
  CHECK(UnionIntervals({}).empty());
}

TEST_CASE("UnionIntervals keeps an interval that contains the following ones", "[union]") {
  CHECK(UnionIntervals({{0, 10, 1}, {2, 3, 1}, {4, 5, 1}, {11, 12, 1}}) == IntervalList{{0, 10, 0}, {11, 12, 0}});
}

}  // namespace
}  // namespace rlscope::report
