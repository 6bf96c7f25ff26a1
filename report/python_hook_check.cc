#include "report/python_hook_check.h"

#include "absl/strings/str_format.h"
#include "format/wire_format.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

std::optional<PythonHookCheck> CheckPythonHook(const ProcessCorrection& correction) {
  if (correction.python_hook_samples < kMinTimedCallbacks) return std::nullopt;
  PythonHookCheck check;
  check.timed_callbacks = correction.python_hook_samples;
  check.callbacks = correction.python_hook_samples * wire::kPythonHookSampleStride;
  check.per_callback_ns = correction.python_hook_sample_ns / static_cast<double>(correction.python_hook_samples);
  check.hook_ns = check.per_callback_ns * static_cast<double>(check.callbacks);
  // The prices as the correction scaled them where threads waited for a
  // CPU (cpu_contention.h), as the timed callbacks' wall time holds those waits.
  check.priced_ns = correction.python_cpu_wait_ns;
  for (const auto& [site, tally] : correction.by_site) {
    if (site == kPythonHookFloorSite) {
      check.floor_removed_ns = tally.ns;
    } else if (PricedInsideCallbacks(site)) {
      check.priced_ns += tally.ns;
    }
  }
  return check;
}

std::string DescribePythonHookCheck(const PythonHookCheck& check) {
  std::string line = absl::StrFormat(
      "Python hook timed in this run: %s (%.0f ns a callback, 1 in %d of about %.1f M callbacks timed); the "
      "calibration priced its work at %s",
      FormatDuration(static_cast<int64_t>(check.hook_ns)), check.per_callback_ns, wire::kPythonHookSampleStride,
      static_cast<double>(check.callbacks) / 1e6, FormatDuration(static_cast<int64_t>(check.priced_ns)));
  if (check.under_priced_ns() <= 0) return line;
  if (check.floor_removed_ns <= 0) {
    return line +
           absl::StrFormat("; the hook's own time alone is more, so its threads are under-corrected by at least %s",
                           FormatDuration(static_cast<int64_t>(check.under_priced_ns())));
  }
  return line + absl::StrFormat(
                    "; the hook's own time alone is more, so the correction removed it instead (%s more, as %s; "
                    "the interpreter's side of each callback is not in it)",
                    FormatDuration(static_cast<int64_t>(check.floor_removed_ns)), kPythonHookFloorSite);
}

}  // namespace rlscope::report
