// OverheadModel: what each kind of rlscope work costs a profiled program on
// one machine, in nanoseconds per event, as `rlscope calibrate` measured it
// (calibration/README.md). The overhead correction
// (report/overhead_correction.h) multiplies these by what a trace recorded.
//
// Costs are keyed by site name (the constants below). Python costs depend
// on the interpreter, so their keys carry its version: "python_call@3.11".
// CUPTI's inflation depends on the function: "cupti:cudaLaunchKernel".
#ifndef RLSCOPE_CALIBRATION_OVERHEAD_MODEL_H_
#define RLSCOPE_CALIBRATION_OVERHEAD_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "machine_fingerprint.h"

namespace rlscope::calibration {

// Site names. Per event unless said otherwise.
inline constexpr std::string_view kCudaHook = "cuda_hook";            // CUDA runtime call the hook recorded
inline constexpr std::string_view kCuptiPrefix = "cupti:";            // + function: CUPTI's inflation of one call
inline constexpr std::string_view kTrampoline = "trampoline";         // hooked library call recorded
inline constexpr std::string_view kNestedHook = "nested_hook";        // hooked call inside another (not recorded)
inline constexpr std::string_view kNvtxRange = "nvtx_range";          // NVTX range boundary: push or pop
inline constexpr std::string_view kNativeProcess = "native_process";  // start + exit of a traced native process
// Python sites, suffixed "@MAJOR.MINOR":
inline constexpr std::string_view kPythonCall = "python_call";              // function call + return seen
inline constexpr std::string_view kPythonCallSite = "python_call_site";     // a Python function's call seen at its site (3.12+)
inline constexpr std::string_view kPythonBuiltin = "python_builtin";        // interpreter builtin call seen
inline constexpr std::string_view kPythonTransition = "python_transition";  // Python -> native call recorded
inline constexpr std::string_view kPythonOperation = "python_operation";    // inferred operation boundary: push or pop
inline constexpr std::string_view kPythonProcess = "python_process";        // start + exit of a traced Python process

// PythonSite: the key of a Python site for interpreter `version` ("3.11").
std::string PythonSite(std::string_view site, std::string_view version);

struct MeasuredCost {
  double ns = 0;         // Per event: the median over repetitions.
  double spread_ns = 0;  // Half the range (max - min) over repetitions.
  int repetitions = 0;
  uint64_t events = 0;   // Events per repetition.
};

// Uncertain: a cost its own repetitions do not pin down: a spread larger
// than its value, or a value below zero by more than its spread. Values
// within kUncertainFloorNs of zero are a cost of about nothing, whatever
// their spread (a disabled builtin call: -2 +- 12 ns).
inline constexpr double kUncertainFloorNs = 20;
bool Uncertain(const MeasuredCost& cost);

// CostFromSamples: the cost of one event from its per-repetition
// estimates: the median (robust to one disturbed repetition) and half the
// range as the spread.
MeasuredCost CostFromSamples(std::vector<double> per_event_ns, uint64_t events);

struct OverheadModel {
  MachineFingerprint fingerprint;
  std::string rlscope_version;
  int64_t created_unix_s = 0;
  std::map<std::string, MeasuredCost, std::less<>> costs;

  // Cost: the calibrated cost of `site`, clamped at 0 (a negative
  // measurement is noise); nullopt when it was not calibrated.
  std::optional<double> Cost(std::string_view site) const;
  // CuptiCost: CUPTI's inflation of one call of `api` (runtime or `driver`
  // function): its own calibration, else that of the calibrated function
  // of its family (launch, copy, memset, synchronize; see the .cc), else
  // nullopt.
  std::optional<double> CuptiCost(std::string_view api, bool driver) const;
  // PythonVersions: the interpreter versions with Python costs.
  std::vector<std::string> PythonVersions() const;
};

// The calibration file (JSON, schema "rlscope.calibration/1").
inline constexpr std::string_view kCalibrationSchema = "rlscope.calibration/1";
absl::StatusOr<OverheadModel> ReadOverheadModel(const std::string& path);
// ParseOverheadModel: the same for the file's text (`path` names it in
// messages). Refuses other schemas, wrong types and costs that are not
// finite numbers within kMaxCostNs, each with one message naming the file.
absl::StatusOr<OverheadModel> ParseOverheadModel(std::string_view text, const std::string& path);
// A per-event cost beyond a second is no measurement of a hook: a damaged
// or hand-edited file, refused rather than subtracted from every event.
inline constexpr double kMaxCostNs = 1e9;
absl::Status WriteOverheadModel(const std::string& path, const OverheadModel& model);

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_OVERHEAD_MODEL_H_
