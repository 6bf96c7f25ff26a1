#include "report/cpu_contention.h"

#include <algorithm>
#include <cstdint>

namespace rlscope::report {

CpuContention::CpuContention(std::span<const CpuWait> waits) {
  for (const CpuWait& wait : waits) {
    if (wait.end_ns <= wait.begin_ns) continue;
    // Consecutive readings share their bound (the flusher's monotonic
    // time): one that begins before the last kept span ends is out of
    // order, not trusted.
    if (!spans_.empty() && wait.begin_ns < spans_.back().end_ns) continue;
    double scale = 1.0;
    if (wait.ran_ns >= kMinCpuWaitRanNs) {
      const int64_t waited_ns = wait.waited_ns - std::max<int64_t>(wait.runs, 0) * kWakeUpWaitNs;
      scale = std::min(kMaxCpuWaitScale,
                       1.0 + static_cast<double>(std::max<int64_t>(waited_ns, 0)) / static_cast<double>(wait.ran_ns));
    }
    any_ = any_ || scale > 1.0;
    spans_.push_back({wait.end_ns, scale});
  }
}

double CpuContention::Scale(int64_t t_ns) const {
  if (!any_) return 1.0;
  // The first span that ends after t_ns: it holds t_ns, or is the next
  // reading after a gap, which stands for the gap.
  auto holding =
      std::upper_bound(spans_.begin(), spans_.end(), t_ns, [](int64_t t, const Span& span) { return t < span.end_ns; });
  return holding == spans_.end() ? 1.0 : holding->scale;
}

}  // namespace rlscope::report
