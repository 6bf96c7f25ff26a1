// CUPTI's price of a kernel launch, at the speed of the run's own
// launches.
//
// The calibration prices what CUPTI adds to a launch in a loop of
// launches, where the driver's and CUPTI's code and data stay in the
// caches. A training script launches between stretches of Python and
// simulation that evict them, and there each launch is slower, CUPTI's
// part with it: in CleanRL's sac on an H100, CUPTI added 2.15 s to the
// CUDA calls (the same run's measured CUDA API time with CUPTI against
// without), where the calibration priced 0.95 s
// (scripts/device/RESULTS.md, 2026-12-06). So a launch's price is
// scaled by how much slower the run's launches are than the
// calibration's loop: the median of the run's launch durations (CUPTI's
// view of each call) over the loop's time per launch (cost.loop_ns),
// within [kMinScale, kMaxScale]. The premise is that CUPTI's part of a
// cold launch slows as the rest of the launch does.
//
// Why the median: a launch that waits for room in a full launch queue is
// long for the GPU's sake, not CUPTI's. Why launches only: a copy or a
// synchronisation lasts as long as the transfer or the GPU work it waits
// for, which says nothing of the caches; a graph launch is not priced by
// its own loop.
#ifndef RLSCOPE_REPORT_CUPTI_CALL_SPEED_H_
#define RLSCOPE_REPORT_CUPTI_CALL_SPEED_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace rlscope::report {

inline constexpr double kMinCuptiScale = 0.5;
inline constexpr double kMaxCuptiScale = 4.0;

// ScalesWithCallSpeed: whether CUPTI's price of CUDA function `api` is
// set to the run's call speed (kernel launches, runtime or driver).
bool ScalesWithCallSpeed(std::string_view api);

// CuptiCallSpeed: the launches a calibrated CUPTI site prices in a
// process, and the scale their price gets.
struct CuptiCallSpeed {
  uint64_t calls = 0;
  double median_call_ns = 0;  // The run's launches, CUPTI's view.
  double loop_ns = 0;         // The calibration loop's time per launch.
  double scale = 1;           // Applied to the site's cost.
};

// MeasureCallSpeed: the scale for launches of `durations_ns` (reordered)
// against a loop of `loop_ns` per launch; 1 where either is missing.
CuptiCallSpeed MeasureCallSpeed(std::vector<double>& durations_ns, double loop_ns);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_CUPTI_CALL_SPEED_H_
