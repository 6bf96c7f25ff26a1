#include "report/bytecode_slowdown_caveat.h"

#include "calibration/overhead_model.h"

namespace rlscope::report {

namespace cal = rlscope::calibration;

std::optional<std::string> BytecodeSlowdownCaveat(const ProcessCorrection& correction) {
  const auto call = correction.by_site.find(std::string(cal::kPythonCall) + "@3.11");
  if (call == correction.by_site.end() || call->second.events == 0) return std::nullopt;
  return std::string(
      "Python 3.11 runs every bytecode slower while a profiler is attached (its specialised instructions are "
      "off), which the correction prices as a typical small function's body per call: a long loop inside one "
      "call is under-corrected, many one-line functions over-corrected (docs/overhead-correction.md; on 3.12+ "
      "this slowdown is gone)");
}

}  // namespace rlscope::report
