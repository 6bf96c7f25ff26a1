#include "report/idle_waits.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

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

// Reference: the same answer cell by cell on a grid of 50 us (all bounds
// lie on it): a cell is Wait where a span covers it and no non-Python
// event does; runs of such cells are cut at Python events' bounds, and
// runs under kMinIdleWaitNs dropped.
IntervalList GridIdleWaits(const IntervalList& spans, const IntervalList& events, int64_t cells) {
  constexpr int64_t kCell = 50'000;
  const auto covers = [](const Interval& i, int64_t cell) {
    return i.begin_ns <= cell * kCell && cell * kCell < i.end_ns;
  };
  std::vector<bool> wait(static_cast<size_t>(cells)), cut(static_cast<size_t>(cells + 1));
  for (int64_t c = 0; c < cells; ++c) {
    bool in_span = false, covered = false;
    for (const Interval& span : spans) in_span = in_span || covers(span, c);
    for (const Interval& event : events) {
      if (event.label != static_cast<int32_t>(Category::kPython)) covered = covered || covers(event, c);
    }
    wait[static_cast<size_t>(c)] = in_span && !covered;
  }
  for (const Interval& event : events) {
    if (event.label != static_cast<int32_t>(Category::kPython)) continue;
    cut[static_cast<size_t>(event.begin_ns / kCell)] = cut[static_cast<size_t>(event.end_ns / kCell)] = true;
  }
  IntervalList out;
  for (int64_t c = 0; c < cells;) {
    if (!wait[static_cast<size_t>(c)]) {
      ++c;
      continue;
    }
    int64_t end = c + 1;
    while (end < cells && wait[static_cast<size_t>(end)] && !cut[static_cast<size_t>(end)]) ++end;
    if ((end - c) * kCell >= kMinIdleWaitNs) out.push_back({c * kCell, end * kCell, kWaitLabel});
    c = end;
  }
  return out;
}

TEST_CASE("Random spans and events give the grid's answer, events far from spans included", "[idle_waits]") {
  std::mt19937 random(7);
  constexpr int64_t kCells = 400;
  const auto random_interval = [&](int32_t label) {
    const int64_t begin = std::uniform_int_distribution<int64_t>(0, kCells - 1)(random);
    const int64_t length = std::uniform_int_distribution<int64_t>(0, 40)(random);
    return Interval{begin * 50'000, std::min(begin + length, kCells) * 50'000, label};
  };
  for (int round = 0; round < 300; ++round) {
    IntervalList spans, events;
    const int span_count = std::uniform_int_distribution<int>(0, 6)(random);
    for (int i = 0; i < span_count; ++i) spans.push_back(random_interval(0));
    const int event_count = std::uniform_int_distribution<int>(0, 30)(random);
    for (int i = 0; i < event_count; ++i) {
      const bool python = std::uniform_int_distribution<int>(0, 1)(random) == 1;
      events.push_back(random_interval(static_cast<int32_t>(python ? Category::kPython : Category::kBackend)));
    }
    std::sort(events.begin(), events.end(), [](const Interval& a, const Interval& b) {
      return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
    });
    INFO("round " << round);
    CHECK(IdleWaits(spans, events) == GridIdleWaits(spans, events, kCells));
  }
}
