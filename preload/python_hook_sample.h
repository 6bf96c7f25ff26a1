// PythonHookSample: times one in wire::kPythonHookSampleStride of the
// Python hook's callbacks on a thread, from entry to exit, so that a report
// can set the hook's own time in the real run beside what the calibration
// prices it at (calibrated costs come from tight loops, where the hook's
// code and data are hot and its slow paths never run).
//
// The hot path is a thread-local decrement and a test; the sampled
// callback pays two clock reads. The gap to the next sample is drawn at
// random from 129..383 callbacks (mean: the stride): a fixed gap aliases
// with a program's loop, whose callbacks repeat in a fixed order (a
// native call, then its return), and timed only one kind of callback. A
// sample's time is added to the thread's kPythonHookSample overhead,
// which the correction does not remove again.
//
// A sample's time is capped at kPythonHookSampleCapNs: scaled up 256x, one
// callback preempted for a few milliseconds on a busy machine would
// otherwise add a second to the estimate. A callback's own slow work
// (first sight of a code object: 5-7 us on average) fits under the cap;
// what is cut makes the estimate lower, the safe side for a floor.
#ifndef RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_
#define RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_

#include <atomic>
#include <cstdint>

#include "format/wire_format.h"
#include "preload/python_hook_breakdown.h"
#include "preload/recorder.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

// Callbacks until the next sample (<= 0: this one), and the generator of
// the gaps, per thread.
extern __thread int32_t t_python_hook_countdown __attribute__((tls_model("initial-exec")));
extern __thread uint32_t t_python_hook_gap_state __attribute__((tls_model("initial-exec")));
// Set by a callback that sets up a code object's info (5-7 us, once per
// code object), so a sampled one is tallied apart (HookPart::kCodeSetup):
// at start-up, imports make such callbacks common enough to swamp the
// steady state's starts in the breakdown.
extern __thread bool t_python_hook_code_setup __attribute__((tls_model("initial-exec")));

// NextPythonHookSampleGap: uniform in [stride/2 + 1, 3 stride/2 - 1]
// (mean: the stride), from a per-thread linear congruential sequence.
inline int32_t NextPythonHookSampleGap() {
  t_python_hook_gap_state = t_python_hook_gap_state * 1103515245u + 12345u;
  constexpr uint32_t kStride = wire::kPythonHookSampleStride;
  return static_cast<int32_t>(kStride / 2 + 1 + (t_python_hook_gap_state >> 8) % (kStride - 1));
}

inline constexpr double kPythonHookSampleCapNs = 20'000;
// The cap in ticks: until the flusher knows the tick rate, as if ticks
// were 5 GHz (20 us or more at any real rate).
extern std::atomic<uint64_t> g_python_hook_sample_cap_ticks;
// SetPythonHookSampleTicksPerNs: the flusher, once the tick rate is known.
void SetPythonHookSampleTicksPerNs(double ticks_per_ns);

class PythonHookSample {
 public:
  // `part`: what the callback is, where known at its entry (else set_part).
  explicit PythonHookSample(HookPart part = HookPart::kOther)
      : begin_(__builtin_expect(--t_python_hook_countdown <= 0, 0) ? Begin() : 0), part_(part) {}
  ~PythonHookSample() {
    if (__builtin_expect(begin_ == 0, 1)) return;
    HookMarkBegin(0);
    if (t_python_hook_code_setup) part_ = HookPart::kCodeSetup;
    const uint64_t cap = g_python_hook_sample_cap_ticks.load(std::memory_order_relaxed);
    const uint64_t elapsed = NowTicks() - begin_;
    NoteHookPart(part_, elapsed < cap ? elapsed : cap);
    if (ThreadBuffer* buffer = t_state.buffer; buffer != nullptr) {
      buffer->CountOverhead(wire::OverheadKind::kPythonHookSample, elapsed < cap ? elapsed : cap);
    }
  }
  // set_part: what this callback turned out to be (python_hook_breakdown.h).
  void set_part(HookPart part) { part_ = part; }
  PythonHookSample(const PythonHookSample&) = delete;
  PythonHookSample& operator=(const PythonHookSample&) = delete;

 private:
  static uint64_t Begin() {
    // A thread's first callback (its state still 0) seeds the thread's
    // gaps (from its thread-local block's address: threads and processes
    // draw different sequences) and draws the first: it is not timed, as
    // any other callback is not, on average.
    const bool first = t_python_hook_gap_state == 0;
    if (first) {
      const auto seed = reinterpret_cast<uintptr_t>(&t_python_hook_gap_state);
      t_python_hook_gap_state = static_cast<uint32_t>(seed ^ (seed >> 32)) | 1u;
    }
    t_python_hook_countdown = NextPythonHookSampleGap();
    if (first) return 0;
    t_python_hook_code_setup = false;
    const uint64_t now = NowTicks();
    HookMarkBegin(now);
    return now;
  }
  const uint64_t begin_;
  HookPart part_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_
