#include "preload/tick_clock.h"

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
}

void TickClock::Update(ClockSyncPoint latest) {
  if (!g_ticks_are_tsc) return;  // Ticks already are nanoseconds.
  const uint64_t dticks = latest.ticks - origin_.ticks;
  const int64_t dns = latest.monotonic_ns - origin_.monotonic_ns;
  // Below kMinRateSpanNs the pair jitter would dominate the estimate.
  if (dticks > 0 && dns >= kMinRateSpanNs) {
    ns_per_tick_ = static_cast<double>(dns) / static_cast<double>(dticks);
    rate_known_ = true;
  }
}

int64_t TickClock::ToNs(uint64_t ticks) const {
  if (!g_ticks_are_tsc) return static_cast<int64_t>(ticks);
  const int64_t dticks = static_cast<int64_t>(ticks - origin_.ticks);
  return origin_.monotonic_ns + static_cast<int64_t>(static_cast<double>(dticks) * ns_per_tick_);
}

}  // namespace rlscope::preload
