#include "report/cpu_contention.h"

#include <algorithm>
#include <cstdint>

namespace rlscope::report {

CpuContention::CpuContention(std::span<const CpuWait> waits) {
  for (const CpuWait& wait : waits) {
    const int64_t waited_ns = wait.waited_ns - std::max<int64_t>(wait.runs, 0) * kWakeUpWaitNs;
    if (wait.end_ns <= wait.begin_ns || wait.ran_ns < kMinCpuWaitRanNs) continue;
    const double scale = std::min(kMaxCpuWaitScale, 1.0 + static_cast<double>(std::max<int64_t>(waited_ns, 0)) /
                                                              static_cast<double>(wait.ran_ns));
    if (first_begin_ns_ == INT64_MIN) {
      first_begin_ns_ = wait.begin_ns;
      before_first_ = scale;
    }
    if (scale <= 1.0) continue;
    if (!spans_.empty() && wait.begin_ns < spans_.back().end_ns) continue;  // Out of order: not trusted.
    spans_.push_back({wait.begin_ns, wait.end_ns, scale});
  }
}

double CpuContention::Scale(int64_t t_ns) const {
  if (t_ns < first_begin_ns_) return before_first_;
  auto after = std::upper_bound(spans_.begin(), spans_.end(), t_ns,
                                [](int64_t t, const Span& span) { return t < span.begin_ns; });
  if (after == spans_.begin()) return 1.0;
  const Span& span = *(after - 1);
  return t_ns < span.end_ns ? span.scale : 1.0;
}

}  // namespace rlscope::report
