#include "calibration/calibration_store.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rlscope::calibration {

namespace {

// Fnv1a: a stable 64-bit hash (std::hash may change between builds).
uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string CacheDirectory() {
  if (const char* xdg = getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') return xdg;
  if (const char* home = getenv("HOME"); home != nullptr && *home != '\0') return std::string(home) + "/.cache";
  return "/tmp";
}

constexpr char kHowTo[] = "run `rlscope calibrate` once on this machine (a few minutes) to correct reports";

}  // namespace

std::string DefaultCalibrationPath(const MachineFingerprint& machine) {
  return absl::StrFormat("%s/rlscope/calibration-%016x.json", CacheDirectory(), Fnv1a(machine.Key()));
}

CalibrationChoice ChooseCalibration(const std::string& explicit_path, const MachineFingerprint& machine,
                                    const std::string& rlscope_version) {
  CalibrationChoice choice;
  choice.path = explicit_path.empty() ? DefaultCalibrationPath(machine) : explicit_path;
  std::error_code error;
  if (explicit_path.empty() && !std::filesystem::exists(choice.path, error)) {
    choice.message =
        absl::StrFormat("no calibration for this machine (%s): reports are uncorrected; %s", choice.path, kHowTo);
    return choice;
  }
  absl::StatusOr<OverheadModel> model = ReadOverheadModel(choice.path);
  if (!model.ok()) {
    choice.message = absl::StrFormat("%s: reports are uncorrected; %s", model.status().message(), kHowTo);
    return choice;
  }
  std::vector<std::string> differences = model->fingerprint.Differences(machine);
  if (model->rlscope_version != rlscope_version) {
    differences.push_back(absl::StrFormat("rlscope '%s' vs '%s'", model->rlscope_version, rlscope_version));
  }
  if (!differences.empty() && explicit_path.empty()) {
    choice.message = absl::StrFormat(
        "the calibration %s was made on another machine or rlscope (%s): reports are "
        "uncorrected; %s",
        choice.path, absl::StrJoin(differences, "; "), kHowTo);
    return choice;
  }
  if (!differences.empty()) {
    choice.message = absl::StrFormat("warning: %s was made on another machine or rlscope (%s); using it as asked",
                                     choice.path, absl::StrJoin(differences, "; "));
  }
  if (model->quality.verdict == kVerdictAcceptedUncertain) {
    // Used, as stored, but never silently taken for a trusted one.
    const std::string warning = absl::StrFormat(
        "warning: %s was stored with --accept-uncertain (%d reason(s) in its quality.reasons): corrections by it are "
        "approximate; run `rlscope calibrate` again on a quiet machine",
        choice.path, model->quality.reasons.size());
    choice.message = choice.message.empty() ? warning : choice.message + "; " + warning;
  }
  choice.model = *std::move(model);
  return choice;
}

}  // namespace rlscope::calibration
