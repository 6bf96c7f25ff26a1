// MachineFingerprint: what a calibration depends on. Costs measured on one
// machine do not carry to another CPU, kernel, GPU or driver, nor to
// another rlscope build; `rlscope run` applies a calibration only when
// these match (calibration_store.h).
#ifndef RLSCOPE_CALIBRATION_MACHINE_FINGERPRINT_H_
#define RLSCOPE_CALIBRATION_MACHINE_FINGERPRINT_H_

#include <string>
#include <vector>

namespace rlscope::calibration {

struct MachineFingerprint {
  std::string cpu;     // /proc/cpuinfo "model name"
  std::string kernel;  // uname -r
  std::string gpu;     // NVIDIA driver's model name of GPU 0, "none" without one
  std::string driver;  // NVIDIA kernel module version, "none" without one
  // Informational (not matched): the CUDA runtime calibrate used.
  std::string cuda_runtime;

  // Key: the matched fields, as one string (hashed into the file name).
  std::string Key() const;
  // Differences: "cpu: A != B" for each matched field that differs.
  std::vector<std::string> Differences(const MachineFingerprint& other) const;
};

// CurrentMachine: this machine's fingerprint (reads /proc, uname; cheap,
// starts no process).
MachineFingerprint CurrentMachine();

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_MACHINE_FINGERPRINT_H_
