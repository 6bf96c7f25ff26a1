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
#include "calibration/contention.h"
#include "calibration/machine_fingerprint.h"
#include "nlohmann/json.hpp"

namespace rlscope::calibration {

// Site names. Per event unless said otherwise.
inline constexpr std::string_view kCudaHook = "cuda_hook";            // CUDA runtime call the hook recorded
inline constexpr std::string_view kCuptiPrefix = "cupti:";            // + function: CUPTI's inflation of one call
inline constexpr std::string_view kTrampoline = "trampoline";         // hooked library call recorded
inline constexpr std::string_view kNestedHook = "nested_hook";        // hooked call inside another (not recorded)
inline constexpr std::string_view kNvtxRange = "nvtx_range";          // NVTX range boundary: push or pop
inline constexpr std::string_view kNativeProcess = "native_process";  // start + exit of a traced native process
// Python sites, suffixed "@MAJOR.MINOR":
inline constexpr std::string_view kPythonCall = "python_call";  // function call + return seen
inline constexpr std::string_view kPythonCallSite =
    "python_call_site";  // a Python function's call seen at its site (3.12+)
inline constexpr std::string_view kPythonBuiltin = "python_builtin";        // interpreter builtin call seen
inline constexpr std::string_view kPythonTransition = "python_transition";  // Python -> native call recorded
inline constexpr std::string_view kPythonOperation = "python_operation";    // inferred operation boundary: push or pop
inline constexpr std::string_view kPythonProcess = "python_process";        // start + exit of a traced Python process

// PythonSite: the key of a Python site for interpreter `version` ("3.11").
std::string PythonSite(std::string_view site, std::string_view version);

struct MeasuredCost {
  double ns = 0;         // Per event: the median over repetitions.
  double spread_ns = 0;  // Standard error of the kept repetitions' mean (CostFromRepetitions).
  int repetitions = 0;
  uint64_t events = 0;  // Events per repetition.
  // CUPTI's costs on a real GPU: the calibration loop's whole time per
  // call with CUPTI on (the kept repetitions' median), the call speed the
  // cost was measured at, which a run's own calls are set beside
  // (report/cupti_call_speed.h). 0: not recorded.
  double loop_ns = 0;
};

// Uncertain: a cost its own repetitions do not pin down: a spread larger
// than its value, or a value below zero by more than its spread. Values
// within kUncertainFloorNs of zero are a cost of about nothing, whatever
// their spread (a disabled builtin call: -2 +- 12 ns).
inline constexpr double kUncertainFloorNs = 20;
bool Uncertain(const MeasuredCost& cost);

// Repetition: one repetition of a cost's measurement: the whole loop
// time of its profiled side and of its baseline side (ns).
struct Repetition {
  double measured_ns = 0;
  double base_ns = 0;
};

// Median: of a non-empty list (the middle two's mean for an even count).
double Median(std::vector<double> values);

// CostFromRepetitions: the cost of one event from every repetition made
// (all rounds): (measured - base) / events - subtract_ns_per_event, over
// the least disturbed half of the repetitions (at least 2): their median
// is the cost, the standard error of their mean its spread (for two, half
// their difference), the median of their profiled sides per event its
// loop_ns. `stored_events` becomes the cost's `events`.
//
// Why not the median of all: contention only ever adds time, to either
// side. Added to the baseline it makes a difference too small, added to
// the profiled side (which has more threads to compete: the flusher, the
// collector) too large, and a busy machine does the latter more often, so
// the median of all moves up with the load (seen: python_call 583 +- 318
// ns, about ten times its quiet value). Nor the smallest difference: that
// is the one whose baseline was disturbed most. A repetition's disturbance
// is what its two sides took over the fastest of their kind, in ns
// (measured - fastest measured + base - fastest base): the repetitions
// with the least have both sides near their uncontended time, and their
// differences keep the pairing that cancels a slow drift of the machine.
// Their spread says whether even those agree. A standard error, not half
// their range: a range only grows as rounds add repetitions, so measuring
// again could never settle a cost on a machine whose speed wanders (a
// shared host runs the same loop at two speeds from one moment to the
// next, scripts/device/RESULTS.md).
MeasuredCost CostFromRepetitions(const std::vector<Repetition>& repetitions, double events,
                                 double subtract_ns_per_event, uint64_t stored_events);

// CalibrationQuality: how far a calibration can be trusted, as
// `rlscope calibrate` judged it (calibration_verdict.h). Files written
// before verdicts were recorded load with an empty verdict.
inline constexpr std::string_view kVerdictTrusted = "trusted";
// Stored with --accept-uncertain although the verdict refused it.
inline constexpr std::string_view kVerdictAcceptedUncertain = "accepted-uncertain";
struct CalibrationQuality {
  std::string verdict;                  // kVerdict*, or "" (not recorded).
  std::vector<std::string> reasons;     // Why it was not trusted.
  std::vector<std::string> warnings;    // What was seen that did not make it untrusted.
  std::vector<std::string> remeasured;  // Sites measured in more than one round.
  std::optional<ContentionFigures> contention;
};

struct OverheadModel {
  MachineFingerprint fingerprint;
  std::string rlscope_version;
  int64_t created_unix_s = 0;
  std::map<std::string, MeasuredCost, std::less<>> costs;
  CalibrationQuality quality;

  // Cost: the calibrated cost of `site`, clamped at 0 (a negative
  // measurement is noise); nullopt when it was not calibrated.
  std::optional<double> Cost(std::string_view site) const;
  // CuptiCost: CUPTI's inflation of one call of `api` (runtime or `driver`
  // function): its own calibration, else that of the calibrated function
  // of its family (launch, copy, memset, synchronize; see the .cc), else
  // nullopt.
  std::optional<double> CuptiCost(std::string_view api, bool driver) const;
  // CuptiSite: the calibrated site CuptiCost prices `api` by, or "".
  std::string CuptiSite(std::string_view api, bool driver) const;
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
// A process's start and exit (kNativeProcess, kPythonProcess@VERSION) may
// take over a second on a busy machine (1.46 s seen beside two CPU hogs);
// beyond a minute it is no measurement either.
inline constexpr double kMaxProcessCostNs = 60e9;
// MaxCostNs: the largest cost the file may hold for `site`.
double MaxCostNs(std::string_view site);
// WriteOverheadModel: refuses (and writes nothing) where the file would not
// read back, so a calibration never stores what every report then rejects.
absl::Status WriteOverheadModel(const std::string& path, const OverheadModel& model);
// ContentionJson: the figures as the file stores them (also in report.json):
// unknown figures (-1) are null.
nlohmann::ordered_json ContentionJson(const ContentionFigures& figures);

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_OVERHEAD_MODEL_H_
