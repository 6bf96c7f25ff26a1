#include "report/idle_waits.h"

#include <catch2/catch.hpp>

#include "report/category.h"

using namespace rlscope::report;

namespace {

constexpr int32_t kWaitLabel = static_cast<int32_t>(Category::kWait);

Interval Event(int64_t begin, int64_t end, Category category) { return {begin, end, static_cast<int32_t>(category)}; }

}  // namespace

TEST_CASE("A blocked span at the thread's base level is all Wait", "[idle_waits]") {
  CHECK(IdleWaits({{1'000'000, 9'000'000, 0}}, {}) == IntervalList{{1'000'000, 9'000'000, kWaitLabel}});
}

TEST_CASE("A blocked span leaves a native call's time to the call, and the hook's own waits", "[idle_waits]") {
  const IntervalList events = {Event(2'000'000, 3'000'000, Category::kBackend),
                               Event(5'000'000, 6'000'000, Category::kWait),
                               Event(8'500'000, 12'000'000, Category::kCudaApi)};
  CHECK(IdleWaits({{1'000'000, 9'000'000, 0}}, events) == IntervalList{{1'000'000, 2'000'000, kWaitLabel},
                                                                       {3'000'000, 5'000'000, kWaitLabel},
                                                                       {6'000'000, 8'500'000, kWaitLabel}});
}

TEST_CASE("Inside Python-level intervals the pieces nest: cut at their bounds", "[idle_waits]") {
  // A C call classified as Python (a blocking builtin the hook does not
  // know) from 2 to 4 ms: the span from 3 to 6 ms is cut at 4.
  const IntervalList events = {Event(2'000'000, 4'000'000, Category::kPython)};
  CHECK(IdleWaits({{3'000'000, 6'000'000, 0}}, events) ==
        IntervalList{{3'000'000, 4'000'000, kWaitLabel}, {4'000'000, 6'000'000, kWaitLabel}});
}

TEST_CASE("Overlapping spans count once; slivers are dropped", "[idle_waits]") {
  const IntervalList events = {Event(1'050'000, 5'000'000, Category::kNative)};
  CHECK(IdleWaits({{3'000'000, 8'000'000, 0}, {1'000'000, 4'000'000, 0}}, events) ==
        IntervalList{{5'000'000, 8'000'000, kWaitLabel}});  // 1.00-1.05 ms is under kMinIdleWaitNs.
  CHECK(IdleWaits({}, events).empty());
}
