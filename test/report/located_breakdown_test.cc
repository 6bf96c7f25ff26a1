#include "report/located_breakdown.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "report/breakdown.h"
#include "report/flatten.h"

using namespace rlscope::report;

namespace {
constexpr int32_t kNone = 0, kStep = 1, kWhereA = 2, kWhereB = 3;
constexpr int32_t Cat(Category category) { return static_cast<int32_t>(category); }
}  // namespace

TEST_CASE("Located breakdown splits each row by the innermost native call's line", "[located]") {
  const IntervalList operations = {{10, 60, kStep}};
  const IntervalList cpu_events = {
      {20, 50, Cat(Category::kBackend)}, {30, 40, Cat(Category::kCudaApi)}, {70, 90, Cat(Category::kBackend)}};
  const std::vector<NativeCall> calls = {{20, 50, Category::kBackend, kWhereA, 5},
                                         {70, 90, Category::kBackend, kWhereB, 9}};
  const LocatedBreakdown located =
      ComputeLocatedBreakdown(0, 100, operations, cpu_events, calls, kNone, Category::kPython, false, {});
  const LocatedBreakdown expected = {
      {{kNone, kNoLabel, 0, Resource::kCpu, Category::kPython}, 30},
      {{kNone, kWhereB, 9, Resource::kCpu, Category::kBackend}, 20},
      {{kStep, kNoLabel, 0, Resource::kCpu, Category::kPython}, 20},
      {{kStep, kWhereA, 5, Resource::kCpu, Category::kBackend}, 20},
      {{kStep, kWhereA, 5, Resource::kCpu, Category::kCudaApi}, 10},
  };
  CHECK(located == expected);
}

TEST_CASE("Located breakdown sums back to the breakdown", "[located]") {
  // Nested native calls (the inner one's line wins), a call crossing an
  // operation's end, and GPU-busy time.
  const IntervalList operations = {{0, 50, kStep}};
  const IntervalList cpu_events = {{10, 80, Cat(Category::kBackend)}, {20, 30, Cat(Category::kNative)}};
  const std::vector<NativeCall> calls = {{10, 80, Category::kBackend, kWhereA, 5},
                                         {20, 30, Category::kNative, kWhereB, 7}};
  const IntervalList gpu_busy = {{25, 60, 0}};
  const LocatedBreakdown located =
      ComputeLocatedBreakdown(0, 100, operations, cpu_events, calls, kNone, Category::kPython, false, gpu_busy);
  const Breakdown breakdown =
      ComputeThreadBreakdown(0, 100, operations, cpu_events, kNone, Category::kPython, false, gpu_busy);
  Breakdown summed;
  for (const auto& [key, ns] : located) summed[{key.operation, key.resource, key.category}] += ns;
  CHECK(summed == breakdown);
  CHECK(located.at({kStep, kWhereB, 7, Resource::kCpu, Category::kNative}) == 5);
  CHECK(located.at({kStep, kWhereB, 7, Resource::kCpuGpu, Category::kNative}) == 5);
  CHECK(located.at({kNone, kWhereA, 5, Resource::kCpuGpu, Category::kBackend}) == 10);
  CHECK(located.at({kNone, kWhereA, 5, Resource::kCpu, Category::kBackend}) == 20);
}

TEST_CASE("A breakdown of CPU events that do not nest is the same read in place", "[breakdown]") {
  // ComputeThreadBreakdown reads flat events (IsFlat) as they are and
  // flattens others into a copy: nested events, their flattened list, and
  // that list with pieces cut in two (touching pieces of one label, left
  // unmerged) must give one breakdown.
  std::mt19937 random(11);
  std::uniform_int_distribution<int64_t> coordinate(0, 200);
  std::uniform_int_distribution<int32_t> category(0, 3);
  const IntervalList operations = {{0, 70, kStep}, {90, 160, kStep}};
  const IntervalList gpu_busy = {{50, 120, 0}};
  for (int round = 0; round < 200; ++round) {
    IntervalList nested;
    const int count = std::uniform_int_distribution<int>(0, 12)(random);
    for (int i = 0; i < count; ++i) {
      const int64_t a = coordinate(random), b = coordinate(random);
      nested.push_back({std::min(a, b), std::max(a, b), Cat(static_cast<Category>(category(random)))});
    }
    const IntervalList flat = FlattenInnermost(nested);
    IntervalList cut;
    for (const Interval& piece : flat) {
      const int64_t middle = (piece.begin_ns + piece.end_ns) / 2;
      if (middle > piece.begin_ns && middle < piece.end_ns) {
        cut.push_back({piece.begin_ns, middle, piece.label});
        cut.push_back({middle, piece.end_ns, piece.label});
      } else {
        cut.push_back(piece);
      }
    }
    INFO("round " << round);
    REQUIRE(IsFlat(flat));
    REQUIRE(IsFlat(cut));
    const Breakdown expected =
        ComputeThreadBreakdown(0, 200, operations, nested, kNone, Category::kPython, false, gpu_busy);
    CHECK(ComputeThreadBreakdown(0, 200, operations, flat, kNone, Category::kPython, false, gpu_busy) == expected);
    CHECK(ComputeThreadBreakdown(0, 200, operations, cut, kNone, Category::kPython, false, gpu_busy) == expected);
  }
}
