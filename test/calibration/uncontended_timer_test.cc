#include "calibration/workloads/uncontended_timer.h"

#include <catch2/catch.hpp>

namespace cal = rlscope::calibration;

TEST_CASE("slices preempted for a tenth of their time are set aside", "[uncontended_timer]") {
  cal::UncontendedTimer timer;
  for (int i = 0; i < 90; ++i) timer.AddSlice(10, 200'000, 5'000);  // 19.5 us per iteration, less the wait.
  for (int i = 0; i < 10; ++i) timer.AddSlice(10, 2'000'000, 1'800'000);
  CHECK(timer.wall_ns() == 90 * 200'000 + 10 * 2'000'000);
  CHECK(timer.kept_fraction() == Approx(0.9));
  CHECK(timer.estimated_ns() == 1000 * 19'500);
}

TEST_CASE("slices slowed by a wait the kernel does not see are set aside", "[uncontended_timer]") {
  // Steal time: the thread seemed to run, so no run delay is reported, yet
  // some slices took ten times as long.
  cal::UncontendedTimer timer;
  for (int i = 0; i < 75; ++i) {
    timer.AddSlice(10, 200'000 + (i % 5) * 1'000, 0);  // 20-20.4 us per iteration.
    if (i % 3 == 0) timer.AddSlice(10, 2'000'000, 0);
  }
  CHECK(timer.kept_fraction() == Approx(0.75));
  CHECK(timer.estimated_ns() == Approx(100 * 10 * 20'200).epsilon(0.001));
}

TEST_CASE("a periodic cost that slows slices by less than the factor is kept", "[uncontended_timer]") {
  // Profiling's own periodic costs belong in the estimate, at their rate.
  cal::UncontendedTimer timer;
  for (int i = 0; i < 100; ++i) timer.AddSlice(10, i % 4 == 0 ? 300'000 : 200'000, 0);
  CHECK(timer.kept_fraction() == 1.0);
  CHECK(timer.estimated_ns() == 25 * 300'000 + 75 * 200'000);
}

TEST_CASE("with no slice kept the estimate is the wall time", "[uncontended_timer]") {
  cal::UncontendedTimer empty;
  CHECK(empty.estimated_ns() == 0);
  CHECK(empty.kept_fraction() == 1.0);
  cal::UncontendedTimer preempted;
  preempted.AddSlice(5, 1'000'000, 900'000);
  CHECK(preempted.estimated_ns() == 1'000'000);
  CHECK(preempted.kept_fraction() == 0.0);
}

TEST_CASE("Time runs every iteration once, in order, in slices", "[uncontended_timer]") {
  cal::UncontendedTimer timer;
  int64_t next = 0;
  int64_t calls = 0;
  timer.Time(10'000, [&](int64_t first, int64_t count) {
    CHECK(first == next);
    next += count;
    ++calls;
  });
  CHECK(next == 10'000);
  CHECK(calls > 1);
  CHECK(timer.wall_ns() > 0);
}
