// TickClock: the hot path's timestamp source and its conversion to
// CLOCK_MONOTONIC nanoseconds.
//
// The hot path reads raw ticks: the TSC when the CPU says it is invariant
// (7.6 ns per read on the build machine) or clock_gettime otherwise (15.9 ns).
// Conversion to nanoseconds happens off the hot path, in the flusher, from
// pairs (ticks, monotonic ns) sampled at start and at each flush.
#ifndef RLSCOPE_PRELOAD_TICK_CLOCK_H_
#define RLSCOPE_PRELOAD_TICK_CLOCK_H_

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace rlscope::preload {

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Set once at load time by TickClock::Init, read on every event.
extern bool g_ticks_are_tsc;

// NowTicks: raw timestamp for the hot path.
inline uint64_t NowTicks() {
#if defined(__x86_64__)
  if (__builtin_expect(g_ticks_are_tsc, 1)) return __rdtsc();
#endif
  return static_cast<uint64_t>(MonotonicNs());
}

// A simultaneous reading of both clocks.
struct ClockSyncPoint {
  uint64_t ticks = 0;
  int64_t monotonic_ns = 0;
};

// TickClock: decides the tick source and converts ticks to nanoseconds.
// Not thread-safe: the flusher thread owns the instance that converts.
class TickClock {
 public:
  // Init picks TSC when CPUID reports an invariant TSC. Call once, early.
  static void Init();
  static const char* SourceName() { return g_ticks_are_tsc ? "tsc" : "clock_gettime"; }

  // SamplePoint reads both clocks back to back, keeping the tightest of a
  // few tries so the pair is accurate to tens of nanoseconds.
  static ClockSyncPoint SamplePoint();

  // Reset starts a new mapping at `origin` (process start, fork child start).
  void Reset(ClockSyncPoint origin);
  // Update refines the tick rate with a later point; call before converting
  // events recorded up to that point. Points closer than kMinRateSpanNs to
  // the origin are ignored (too noisy).
  void Update(ClockSyncPoint latest);
  // RateKnown: whether ToNs is trustworthy yet. The flusher waits out the
  // rest of kMinRateSpanNs (only ever at the exit of a very short process).
  bool RateKnown() const { return rate_known_; }
  int64_t origin_ns() const { return origin_.monotonic_ns; }
  double ns_per_tick() const { return ns_per_tick_; }
  int64_t ToNs(uint64_t ticks) const;

  static constexpr int64_t kMinRateSpanNs = 2000000;  // 2 ms: error < 1e-5.

 private:
  ClockSyncPoint origin_;
  double ns_per_tick_ = 1.0;
  bool rate_known_ = false;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_TICK_CLOCK_H_
