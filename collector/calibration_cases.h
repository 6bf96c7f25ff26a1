// CalibrationCases: what `rlscope calibrate` measures on this machine: the
// cases of its workloads (native loops, the CUDA runtime with and without
// CUPTI, each Python interpreter found), in the order their costs depend on
// each other (a later case subtracts what earlier ones measured).
#ifndef RLSCOPE_COLLECTOR_CALIBRATION_CASES_H_
#define RLSCOPE_COLLECTOR_CALIBRATION_CASES_H_

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/calibration_sweep.h"

namespace rlscope::collector::calibrate {

// Where the calibration's workloads are installed (bin/, lib/,
// share/rlscope/ next to each other, as FindInstallation knows them).
struct Layout {
  std::filesystem::path bin, lib, share;
};
absl::StatusOr<Layout> FindLayout();

// PythonVersions: the interpreters to calibrate, by MAJOR.MINOR version
// (first path wins): `requested`, else python3 on PATH and
// /usr/bin/python3. What could not be run goes to `problems`.
std::map<std::string, std::string> PythonVersions(const std::vector<std::string>& requested,
                                                  const std::filesystem::path& scratch,
                                                  std::vector<std::string>* problems);

// CudaSetup: the CUDA runtime the CUDA cases run on: the real one with a
// GPU, else rlscope's fake; unavailable when built without either.
struct CudaSetup {
  bool available = false;
  bool fake = false;
  std::string runtime;  // For the fingerprint: "real 13000", "fake".
  std::vector<std::string> environment;
  std::string cupti_path;
  std::vector<std::string> cases;
};
CudaSetup FindCuda(const Layout& layout, const std::filesystem::path& scratch);

// BuildCases: every case to measure, in dependency order.
std::vector<Case> BuildCases(const Layout& layout, const CudaSetup& cuda, const std::vector<std::string>& native_cases,
                             const std::map<std::string, std::string>& pythons, const std::filesystem::path& scratch);

}  // namespace rlscope::collector::calibrate

#endif  // RLSCOPE_COLLECTOR_CALIBRATION_CASES_H_
