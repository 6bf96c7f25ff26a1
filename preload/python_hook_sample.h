// PythonHookSample: times one in wire::kPythonHookSampleStride of the
// Python hook's callbacks on a thread, from entry to exit, so that a report
// can set the hook's own time in the real run beside what the calibration
// prices it at (calibrated costs come from tight loops, where the hook's
// code and data are hot and its slow paths never run).
//
// The hot path is a thread-local increment and a mask test; the sampled
// callback pays two clock reads. A sample's time is added to the thread's
// kPythonHookSample overhead, which the correction does not remove again.
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
#include "preload/recorder.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

extern __thread uint32_t t_python_hook_callbacks __attribute__((tls_model("initial-exec")));

inline constexpr double kPythonHookSampleCapNs = 20'000;
// The cap in ticks: until the flusher knows the tick rate, as if ticks
// were 5 GHz (20 us or more at any real rate).
extern std::atomic<uint64_t> g_python_hook_sample_cap_ticks;
// SetPythonHookSampleTicksPerNs: the flusher, once the tick rate is known.
void SetPythonHookSampleTicksPerNs(double ticks_per_ns);

class PythonHookSample {
 public:
  PythonHookSample()
      : begin_(__builtin_expect((++t_python_hook_callbacks & (wire::kPythonHookSampleStride - 1)) == 0, 0) ? NowTicks()
                                                                                                           : 0) {}
  ~PythonHookSample() {
    if (__builtin_expect(begin_ == 0, 1)) return;
    if (ThreadBuffer* buffer = t_state.buffer; buffer != nullptr) {
      const uint64_t cap = g_python_hook_sample_cap_ticks.load(std::memory_order_relaxed);
      const uint64_t elapsed = NowTicks() - begin_;
      buffer->CountOverhead(wire::OverheadKind::kPythonHookSample, elapsed < cap ? elapsed : cap);
    }
  }
  PythonHookSample(const PythonHookSample&) = delete;
  PythonHookSample& operator=(const PythonHookSample&) = delete;

 private:
  const uint64_t begin_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_
