#include "report/cupti_call_speed.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace rlscope::report {

bool ScalesWithCallSpeed(std::string_view api) {
  std::string lower(api);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("launch") != std::string::npos && lower.find("graphlaunch") == std::string::npos;
}

CuptiCallSpeed MeasureCallSpeed(std::vector<double>& durations_ns, double loop_ns) {
  CuptiCallSpeed speed;
  speed.calls = durations_ns.size();
  speed.loop_ns = loop_ns;
  if (durations_ns.empty()) return speed;
  const size_t middle = durations_ns.size() / 2;
  std::nth_element(durations_ns.begin(), durations_ns.begin() + static_cast<std::ptrdiff_t>(middle),
                   durations_ns.end());
  speed.median_call_ns = durations_ns[middle];
  if (loop_ns > 0 && speed.median_call_ns > 0) {
    speed.scale = std::clamp(speed.median_call_ns / loop_ns, kMinCuptiScale, kMaxCuptiScale);
  }
  return speed;
}

}  // namespace rlscope::report
