#include "preload/tick_clock.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>

using namespace rlscope::preload;

namespace {

// Ticks of a 3 GHz TSC; the tests feed sync points they make up.
constexpr double kTicksPerNs = 3.0;
constexpr int64_t kOriginNs = 5'000'000'000;
constexpr uint64_t kOriginTicks = 1'000'000;

// Pretends the ticks are a TSC for the test's length.
struct TscTicks {
  bool was = g_ticks_are_tsc;
  TscTicks() { g_ticks_are_tsc = true; }
  ~TscTicks() { g_ticks_are_tsc = was; }
};

uint64_t TicksAt(int64_t ns_since_origin) {
  return kOriginTicks + static_cast<uint64_t>(std::llround(static_cast<double>(ns_since_origin) * kTicksPerNs));
}

ClockSyncPoint PointAt(int64_t ns_since_origin, int64_t jitter_ns = 0) {
  return {TicksAt(ns_since_origin), kOriginNs + ns_since_origin + jitter_ns};
}

TickClock StartedClock() {
  TickClock clock;
  clock.Reset({kOriginTicks, kOriginNs});
  clock.Update(PointAt(20'000'000));
  REQUIRE(clock.RateKnown());
  return clock;
}

}  // namespace

TEST_CASE("a tick converts to the same time before and after later sync points", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock = StartedClock();
  // Recorded after this flush's sync point and converted in it (a push
  // drained now), then converted again after the next points (its capture
  // edge, taken a flush later), which carry jitter that moves the rate.
  const uint64_t push = TicksAt(20'500'000);
  const int64_t first = clock.ToNs(push);
  clock.Update(PointAt(40'000'000, 300));
  CHECK(clock.ToNs(push) == first);
  clock.Update(PointAt(60'000'000, -450));
  CHECK(clock.ToNs(push) == first);
  // A rate of its own for each segment, but one time for each tick.
  const uint64_t later = TicksAt(45'000'000);
  const int64_t later_ns = clock.ToNs(later);
  for (int64_t flush = 4; flush < 50; ++flush) clock.Update(PointAt(flush * 20'000'000, flush % 3 * 100));
  CHECK(clock.ToNs(later) == later_ns);
  CHECK(clock.ToNs(push) == first);
}

TEST_CASE("later ticks never convert to earlier times", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock = StartedClock();
  std::mt19937 random(7);
  std::uniform_int_distribution<int64_t> jitter(-2000, 2000);
  int64_t previous = INT64_MIN;
  for (int64_t flush = 2; flush < 200; ++flush) {
    // Ticks on both sides of the sync point, converted before and after it.
    for (int64_t at = (flush - 1) * 20'000'000 - 500'000; at < flush * 20'000'000 + 500'000; at += 100'000) {
      const int64_t ns = clock.ToNs(TicksAt(at));
      if (at >= (flush - 1) * 20'000'000 + 500'000) {
        CHECK(ns >= previous);
        previous = ns;
      }
    }
    clock.Update(PointAt(flush * 20'000'000, jitter(random)));
  }
}

TEST_CASE("the conversion follows the measured clock", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock = StartedClock();
  std::mt19937 random(11);
  std::uniform_int_distribution<int64_t> jitter(-50, 50);
  SECTION("a steady rate, points jittered by 50 ns") {
    int64_t worst = 0;
    for (int64_t flush = 2; flush < 500; ++flush) {
      const int64_t at = flush * 20'000'000;
      clock.Update(PointAt(at, jitter(random)));
      worst = std::max(worst, std::abs(clock.ToNs(TicksAt(at + 10'000'000)) - (kOriginNs + at + 10'000'000)));
    }
    CHECK(worst < 300);
  }
  SECTION("the clock slewed by 100 ppm from 2 s on, as NTP may") {
    // Monotonic time at a tick: the TSC's ns, plus 100 ppm of what
    // follows 2 s.
    const auto truth = [](int64_t tsc_ns) {
      return kOriginNs + tsc_ns + (tsc_ns > 2'000'000'000 ? (tsc_ns - 2'000'000'000) / 10'000 : 0);
    };
    int64_t worst_late = 0;
    for (int64_t flush = 2; flush < 1000; ++flush) {
      const int64_t at = flush * 20'000'000;
      clock.Update({TicksAt(at), truth(at) + jitter(random)});
      const int64_t error = std::abs(clock.ToNs(TicksAt(at + 10'000'000)) - truth(at + 10'000'000));
      // Without a correction the average rate since the origin would trail
      // the slew by ever more (1.8 ms by 20 s); with it, the error stays
      // near the slew over the correction's span (100 ppm of 100 ms).
      if (at > 4'000'000'000) worst_late = std::max(worst_late, error);
    }
    CHECK(worst_late < 15'000);
  }
}

TEST_CASE("a jump of the clocks starts a new segment at the measured point", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock = StartedClock();
  clock.Update(PointAt(40'000'000));
  // The machine slept: monotonic time moved 5 s more than the ticks.
  const ClockSyncPoint after{TicksAt(60'000'000), kOriginNs + 5'060'000'000};
  clock.Update(after);
  CHECK(clock.ToNs(after.ticks) == after.monotonic_ns);
  CHECK(clock.ToNs(TicksAt(30'000'000)) == kOriginNs + 30'000'000);
}

TEST_CASE("ticks older than the segments kept extend the oldest", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock = StartedClock();
  std::mt19937 random(5);
  std::uniform_int_distribution<int64_t> jitter(-50, 50);
  // Twice as many sync points, 20 ms apart, as segments are kept.
  for (int64_t flush = 2; flush < 2 * TickClock::kSegments + 2; ++flush) {
    clock.Update(PointAt(flush * 20'000'000, jitter(random)));
  }
  // The begins of calls that have lasted since the start, and of one that
  // began before the origin: the oldest segment's line, near the truth.
  CHECK(std::abs(clock.ToNs(TicksAt(1'000'000)) - (kOriginNs + 1'000'000)) < 1000);
  CHECK(std::abs(clock.ToNs(TicksAt(-1'000'000)) - (kOriginNs - 1'000'000)) < 1000);
  // Within the segments kept, each tick still converts as it did.
  const uint64_t recent = TicksAt((2 * TickClock::kSegments - 100) * int64_t{20'000'000} + 7'000'000);
  const int64_t at = clock.ToNs(recent);
  for (int64_t flush = 2 * TickClock::kSegments + 2; flush < 2 * TickClock::kSegments + 50; ++flush) {
    clock.Update(PointAt(flush * 20'000'000, jitter(random)));
  }
  CHECK(clock.ToNs(recent) == at);
}

TEST_CASE("sync points of flushes woken early add no segment", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock = StartedClock();
  clock.Update(PointAt(40'000'000));
  // A tick after the last segment, converted now and after points 1 ms
  // apart (flushes woken by filling rings), which carry jitter.
  const uint64_t tick = TicksAt(40'500'000);
  const int64_t at = clock.ToNs(tick);
  for (int64_t ms = 41; ms < 55; ++ms) clock.Update(PointAt(ms * 1'000'000, ms % 2 == 0 ? 400 : -400));
  CHECK(clock.ToNs(tick) == at);
  // Beyond kMinSegmentNs a point starts a segment again: the line bends
  // toward the measured clock from there on.
  clock.Update(PointAt(60'000'000, 400));
  CHECK(clock.ToNs(tick) == at);
  CHECK(clock.ToNs(TicksAt(200'000'000)) > clock.ToNs(TicksAt(60'000'000)));
}

TEST_CASE("points too close to the origin or not after the newest are ignored", "[tick_clock]") {
  TscTicks tsc;
  TickClock clock;
  clock.Reset({kOriginTicks, kOriginNs});
  clock.Update(PointAt(TickClock::kMinRateSpanNs / 2, 1000));
  CHECK_FALSE(clock.RateKnown());
  clock.Update(PointAt(20'000'000));
  const int64_t at = clock.ToNs(TicksAt(30'000'000));
  clock.Update(PointAt(10'000'000, 5000));  // Earlier than the newest segment's start.
  CHECK(clock.ToNs(TicksAt(30'000'000)) == at);
}

TEST_CASE("without a TSC the ticks are nanoseconds", "[tick_clock]") {
  const bool was = g_ticks_are_tsc;
  g_ticks_are_tsc = false;
  TickClock clock;
  clock.Reset({100, 100});
  CHECK(clock.RateKnown());
  clock.Update({5'000'000'100, 5'000'000'300});
  CHECK(clock.ToNs(123'456'789) == 123'456'789);
  g_ticks_are_tsc = was;
}
