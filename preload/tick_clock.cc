#include "preload/tick_clock.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rlscope::preload {

bool g_ticks_are_tsc = false;

namespace {

bool CpuHasInvariantTsc() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;  // "Invariant TSC": constant rate, runs in all C-states.
#else
  return false;
#endif
}

}  // namespace

void TickClock::Init() { g_ticks_are_tsc = CpuHasInvariantTsc(); }

ClockSyncPoint TickClock::SamplePoint() {
  ClockSyncPoint best;
  int64_t best_window = INT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    int64_t before = MonotonicNs();
    uint64_t ticks = NowTicks();
    int64_t after = MonotonicNs();
    if (after - before < best_window) {
      best_window = after - before;
      best = {ticks, before + (after - before) / 2};
    }
  }
  return best;
}

void TickClock::Reset(ClockSyncPoint origin) {
  origin_ = origin;
  ns_per_tick_ = 1.0;
  rate_known_ = !g_ticks_are_tsc;
  segment_count_ = 0;
}

void TickClock::Add(Segment segment) {
  segments_[segment_count_ % kSegments] = segment;
  ++segment_count_;
}

void TickClock::Update(ClockSyncPoint latest) {
  if (!g_ticks_are_tsc) return;  // Ticks already are nanoseconds.
  const uint64_t dticks = latest.ticks - origin_.ticks;
  const int64_t dns = latest.monotonic_ns - origin_.monotonic_ns;
  // Below kMinRateSpanNs the pair jitter would dominate the estimate.
  if (static_cast<int64_t>(dticks) <= 0 || dns < kMinRateSpanNs) return;
  ns_per_tick_ = static_cast<double>(dns) / static_cast<double>(dticks);
  if (!rate_known_) {
    // The first segment covers everything since the origin; the second,
    // at the same rate, marks this point, before which no later point goes.
    Add({origin_.ticks, origin_.monotonic_ns, ns_per_tick_});
    Add({latest.ticks, ToNs(latest.ticks), ns_per_tick_});
    rate_known_ = true;
    return;
  }
  const Segment& newest = Newest();
  const auto segment_ticks = static_cast<int64_t>(latest.ticks - newest.ticks);
  // No later than the newest segment's start, or too soon after it (a
  // flush woken early by a filling ring): the newest segment goes on, so
  // the segments kept span at least kSegments * kMinSegmentNs.
  if (segment_ticks <= 0 || static_cast<double>(segment_ticks) * ns_per_tick_ < kMinSegmentNs) return;
  const int64_t at_ns = ToNs(latest.ticks);
  const int64_t error_ns = latest.monotonic_ns - at_ns;
  if (error_ns > kJumpNs || error_ns < -kJumpNs) {
    Add({latest.ticks, latest.monotonic_ns, ns_per_tick_});
    return;
  }
  const double steer_ns =
      std::max(static_cast<double>(kSteerNs), 2.0 * static_cast<double>(segment_ticks) * ns_per_tick_);
  // Within +-0.1 %, so that a rate is never near zero or negative.
  const double correction = std::clamp(static_cast<double>(error_ns) / steer_ns, -1e-3, 1e-3);
  Add({latest.ticks, at_ns, ns_per_tick_ * (1.0 + correction)});
}

int64_t TickClock::ToNs(uint64_t ticks) const {
  if (!g_ticks_are_tsc) return static_cast<int64_t>(ticks);
  if (segment_count_ == 0) {
    // Before the rate is known (the flusher waits for it): the origin's line.
    return origin_.monotonic_ns +
           static_cast<int64_t>(static_cast<double>(static_cast<int64_t>(ticks - origin_.ticks)) * ns_per_tick_);
  }
  // Nearly every tick converted is in the newest segment; the others are
  // found by bisection over the segments kept (in order of their ticks),
  // the oldest kept extended to anything before it.
  const Segment* segment = &Newest();
  if (static_cast<int64_t>(ticks - segment->ticks) < 0) {
    uint64_t low = segment_count_ - std::min<uint64_t>(segment_count_, kSegments), high = segment_count_ - 1;
    while (low < high) {  // The last kept segment starting at or before `ticks` (low if none).
      const uint64_t middle = low + (high - low + 1) / 2;
      if (static_cast<int64_t>(ticks - segments_[middle % kSegments].ticks) >= 0) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    segment = &segments_[low % kSegments];
  }
  const auto dticks = static_cast<int64_t>(ticks - segment->ticks);
  // Before the oldest segment kept: from its start at the average rate
  // (its own carries a correction meant for its 20 ms, not for seconds).
  const double ns_per_tick = dticks < 0 ? ns_per_tick_ : segment->ns_per_tick;
  return segment->ns + static_cast<int64_t>(std::llround(static_cast<double>(dticks) * ns_per_tick));
}

}  // namespace rlscope::preload
