// CalibrationStore: where calibrations live and which one applies.
//
// `rlscope calibrate` writes $XDG_CACHE_HOME/rlscope/calibration-<key>.json
// (~/.cache when XDG_CACHE_HOME is unset), <key> a hash of the machine's
// fingerprint; `--calibration FILE` names another file on both sides.
// `rlscope run` applies a calibration only when it matches this machine
// and this rlscope version; otherwise the run still completes, uncorrected,
// and one line says how to calibrate.
#ifndef RLSCOPE_CALIBRATION_CALIBRATION_STORE_H_
#define RLSCOPE_CALIBRATION_CALIBRATION_STORE_H_

#include <optional>
#include <string>

#include "calibration/machine_fingerprint.h"
#include "calibration/overhead_model.h"

namespace rlscope::calibration {

// DefaultCalibrationPath: the file `rlscope calibrate` writes for `machine`.
std::string DefaultCalibrationPath(const MachineFingerprint& machine);

struct CalibrationChoice {
  std::optional<OverheadModel> model;  // Empty: no usable calibration.
  std::string path;                    // The file looked at.
  // Why there is none, or a warning about the one chosen ("" if all is well).
  std::string message;
};

// ChooseCalibration: `explicit_path` when given (used even on another
// machine, with a warning: the user asked for it), else this machine's
// default file when it matches `machine` and `rlscope_version`. One stored
// with --accept-uncertain is used with a warning.
CalibrationChoice ChooseCalibration(const std::string& explicit_path, const MachineFingerprint& machine,
                                    const std::string& rlscope_version);

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_CALIBRATION_STORE_H_
