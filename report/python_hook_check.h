// The Python hook's own time in a run, timed in-band (one callback in
// wire::kPythonHookSampleStride, preload/python_hook_sample.h), set beside
// what the calibration priced the run's Python work at. The calibration's
// costs come from tight loops, where the hook's code and data are hot and
// its slow paths (wrapped callables, rules, first sights) never run; a
// real run can cost more. The timed figure is a floor of the real cost: it
// leaves out the interpreter's side of each callback (argument passing,
// the instrumented instruction). Where the floor is above the price, the
// price is known too low, and the correction removes the floor instead
// (overhead_correction.cc, PythonHookFloor): this says by how much.
#ifndef RLSCOPE_REPORT_PYTHON_HOOK_CHECK_H_
#define RLSCOPE_REPORT_PYTHON_HOOK_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "report/overhead_correction.h"

namespace rlscope::report {

struct PythonHookCheck {
  uint64_t timed_callbacks = 0;  // Callbacks timed.
  uint64_t callbacks = 0;        // All callbacks, estimated: timed x stride.
  double per_callback_ns = 0;    // Mean time of a timed callback.
  double hook_ns = 0;            // The hook's time in the run, estimated: per callback x callbacks.
  // What the correction priced the hook's work at: the Python sites but a
  // process's start-up, and the self-timed work that happens inside
  // callbacks (first sight of code, a thread's ring, waking the flusher).
  double priced_ns = 0;
  // What the correction removed beyond that price, the hook's timed time
  // being more (kPythonHookFloorSite).
  double floor_removed_ns = 0;
  double under_priced_ns() const { return hook_ns > priced_ns ? hook_ns - priced_ns : 0; }
};

// Fewer timed callbacks than this say too little (a short or native run).
inline constexpr uint64_t kMinTimedCallbacks = 64;

// CheckPythonHook: the comparison for a correction (one process's or the
// run's sum), or nothing when too few callbacks were timed.
std::optional<PythonHookCheck> CheckPythonHook(const ProcessCorrection& correction);

// DescribePythonHookCheck: one line for report.txt (no indent, no newline).
std::string DescribePythonHookCheck(const PythonHookCheck& check);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_PYTHON_HOOK_CHECK_H_
