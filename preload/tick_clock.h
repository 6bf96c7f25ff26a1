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
//
// The conversion is piecewise linear, one segment per Update: a segment
// begins at its sync point's ticks, continues the previous one there, and
// keeps the rate it was given, so a tick value converts to the same
// nanosecond whichever flush converts it (a capture edge taken at a push's
// ticks and that push's event, drained a flush apart, must not trade
// places: the window's count of instances depends on it), and later ticks
// never convert to earlier times (but around a jump of the clocks). Each segment's rate is the average since
// the origin plus the correction that brings the line back to the measured
// clock over the next ~100 ms, so the conversion follows CLOCK_MONOTONIC
// (NTP's slewing included) to within the sync points' jitter.
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
  // Update adds a segment from a later point; call before converting
  // events recorded up to that point. Points closer than kMinRateSpanNs to
  // the origin are ignored (too noisy).
  void Update(ClockSyncPoint latest);
  // RateKnown: whether ToNs is trustworthy yet. The flusher waits out the
  // rest of kMinRateSpanNs (only ever at the exit of a very short process).
  bool RateKnown() const { return rate_known_; }
  int64_t origin_ns() const { return origin_.monotonic_ns; }
  uint64_t origin_ticks() const { return origin_.ticks; }
  // The average rate since the origin (for durations in ticks).
  double ns_per_tick() const { return ns_per_tick_; }
  // ToNs: the same value for the same ticks at every call, as long as
  // the ticks are no older than the oldest segment kept (15 s or more;
  // older ones, the begins of calls lasting longer than that, are taken
  // back from its start at the average rate). Later ticks never give earlier times, but
  // across a jump of the clocks (below).
  int64_t ToNs(uint64_t ticks) const;

  static constexpr int64_t kMinRateSpanNs = 2000000;  // 2 ms: error < 1e-5.
  // Segments kept, at least kMinSegmentNs apart: the last 15 s or more.
  static constexpr int kSegments = 1024;
  static constexpr int64_t kMinSegmentNs = 15'000'000;  // Flushes come every 20 ms.
  // The correction of a segment's rate spreads its error over at least
  // this long (and over twice the last segment's length, so that a flush
  // later than usual cannot overshoot by more than the error itself).
  static constexpr int64_t kSteerNs = 100000000;
  // An error larger than this is a jump of the clocks (a suspended
  // machine), not drift: the next segment starts at the measured point.
  // Ticks converted before it, past its sync point, may then come out
  // later than ticks after it (the events of one flush at most).
  static constexpr int64_t kJumpNs = 1000000;

 private:
  struct Segment {
    uint64_t ticks = 0;
    int64_t ns = 0;
    double ns_per_tick = 1.0;
  };
  const Segment& Newest() const { return segments_[(segment_count_ - 1) % kSegments]; }
  void Add(Segment segment);

  ClockSyncPoint origin_;
  double ns_per_tick_ = 1.0;
  bool rate_known_ = false;
  Segment segments_[kSegments];
  uint64_t segment_count_ = 0;  // Added since Reset; the newest kSegments kept.
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_TICK_CLOCK_H_
