// PythonHookSample: times one in wire::kPythonHookSampleStride of the
// Python hook's callbacks on a thread, from entry to exit, so that a report
// can set the hook's own time in the real run beside what the calibration
// prices it at (calibrated costs come from tight loops, where the hook's
// code and data are hot and its slow paths never run).
//
// The hot path is a thread-local increment and a mask test; the sampled
// callback pays two clock reads. A sample's time is added to the thread's
// kPythonHookSample overhead, which the correction does not remove again.
#ifndef RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_
#define RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_

#include <cstdint>

#include "format/wire_format.h"
#include "preload/recorder.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

extern __thread uint32_t t_python_hook_callbacks __attribute__((tls_model("initial-exec")));

class PythonHookSample {
 public:
  PythonHookSample()
      : begin_(__builtin_expect((++t_python_hook_callbacks & (wire::kPythonHookSampleStride - 1)) == 0, 0) ? NowTicks()
                                                                                                           : 0) {}
  ~PythonHookSample() {
    if (__builtin_expect(begin_ == 0, 1)) return;
    if (ThreadBuffer* buffer = t_state.buffer; buffer != nullptr) {
      buffer->CountOverhead(wire::OverheadKind::kPythonHookSample, NowTicks() - begin_);
    }
  }
  PythonHookSample(const PythonHookSample&) = delete;
  PythonHookSample& operator=(const PythonHookSample&) = delete;

 private:
  const uint64_t begin_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PYTHON_HOOK_SAMPLE_H_
