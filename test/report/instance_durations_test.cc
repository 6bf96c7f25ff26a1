#include "report/instance_durations.h"

#include <catch2/catch.hpp>

using namespace rlscope::report;

namespace {
constexpr int32_t kStep = 1, kAct = 2, kTrain = 3;
Interval At(int64_t time, int32_t operation) { return {time, time, operation}; }
}  // namespace

TEST_CASE("instance durations: each start owns its operation's time until the next start", "[instances]") {
  // act, step, act, step, then a training step in two pieces with an act
  // between them that started no instance of training.
  const IntervalList timeline = {{0, 10, kAct},     {10, 40, kStep},  {40, 45, kAct},    {45, 85, kStep},
                                 {85, 100, kTrain}, {100, 110, kAct}, {110, 130, kTrain}};
  const IntervalList starts = {At(45, kStep), At(0, kAct),    At(10, kStep),
                               At(40, kAct),  At(85, kTrain), At(100, kAct)};  // Any order.
  const auto durations = InstanceDurations(timeline, starts);
  CHECK(durations.at(kStep) == std::vector<int64_t>{30, 40});
  CHECK(durations.at(kAct) == std::vector<int64_t>{10, 5, 10});
  CHECK(durations.at(kTrain) == std::vector<int64_t>{35});  // Both pieces: one instance.
}

TEST_CASE("instance durations: a start inside a piece splits it; time before the first start is the first's",
          "[instances]") {
  // One explicit operation re-entered without leaving the timeline's
  // interval (two back-to-back instances merged into one piece).
  const IntervalList timeline = {{0, 100, kStep}};
  const auto durations = InstanceDurations(timeline, {At(20, kStep), At(60, kStep)});
  CHECK(durations.at(kStep) == std::vector<int64_t>{60, 40});
  // A started instance that the timeline never shows (an explicit operation
  // covered it) takes nothing.
  const auto hidden = InstanceDurations({{0, 50, kAct}}, {At(10, kTrain), At(0, kAct)});
  CHECK(hidden.at(kTrain) == std::vector<int64_t>{0});
  CHECK(hidden.at(kAct) == std::vector<int64_t>{50});
  // Operations without starts (start-up, teardown) are left out.
  CHECK(InstanceDurations({{0, 5, kTrain}}, {}).empty());
}

TEST_CASE("instance stats: mean, nearest-rank p50 and p95, max", "[instances]") {
  std::vector<int64_t> durations;
  for (int64_t i = 20; i >= 1; --i) durations.push_back(i * 10);  // 10 .. 200, unsorted.
  const InstanceStats stats = SummariseInstances("simulation", durations);
  CHECK(stats.operation == "simulation");
  CHECK(stats.instances == 20);
  CHECK(stats.total_ns == 2100);
  CHECK(stats.mean_ns == 105);
  CHECK(stats.p50_ns == 100);  // The 10th of 20.
  CHECK(stats.p95_ns == 190);  // The 19th of 20, not the 20th.
  CHECK(stats.max_ns == 200);
  const InstanceStats one = SummariseInstances("x", {7});
  CHECK((one.p50_ns == 7 && one.p95_ns == 7 && one.max_ns == 7 && one.mean_ns == 7));
  CHECK(SummariseInstances("none", {}).instances == 0);
}

TEST_CASE("instance durations inside capture windows: begun outside, still the owner", "[instances]") {
  // An instance started at 0 runs into the window [50, 100); one starts at 70.
  const IntervalList timeline = {{50, 100, kStep}};
  const IntervalList window = {{50, 100, 0}};
  const auto durations = InstanceDurations(timeline, {At(0, kStep), At(70, kStep)}, &window);
  // Only the instance begun inside is reported, with its own 30 ns, not
  // the 20 ns the earlier one ran inside the window.
  CHECK(durations.at(kStep) == std::vector<int64_t>{30});
  CHECK(InstanceDurations({{50, 60, kAct}}, {At(0, kAct)}, &window).empty());
}
