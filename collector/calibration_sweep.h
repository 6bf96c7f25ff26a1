// CalibrationSweep: how `rlscope calibrate` measures what rlscope's own
// work costs: the cases (small workloads, each repeating one kind of
// hooked call), each run unprofiled and profiled in alternation, in turns,
// repeated where in doubt, and settled into costs (calibration/README.md
// says why each step is as it is). The command (calibrate_command.cc)
// finds the cases (calibration_cases.h), runs the sweep and judges it.
#ifndef RLSCOPE_COLLECTOR_CALIBRATION_SWEEP_H_
#define RLSCOPE_COLLECTOR_CALIBRATION_SWEEP_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "calibration/calibration_verdict.h"

namespace rlscope::collector::calibrate {

// How a case's two runs differ.
enum class Contrast {
  kHooks,    // unprofiled vs profiled: the hooks' cost
  kCupti,    // profiled without vs with CUPTI: CUPTI's inflation
  kProcess,  // unprofiled vs profiled, whole command wall time (start-up + exit)
};

struct Case {
  Case(std::string site_name, std::vector<std::string> command, Contrast how = Contrast::kHooks)
      : site(std::move(site_name)), workload(std::move(command)), contrast(how) {}

  std::string site;                   // Where the result goes (overhead_model.h).
  std::vector<std::string> workload;  // argv, without --iterations.
  Contrast contrast = Contrast::kHooks;
  double events_per_iteration = 1;
  // Records each iteration puts in the thread's ring (0: the case is only
  // counted). Loops of those run in bursts that fit the ring, with pauses
  // the flusher drains it in (not timed): an unbroken loop of cheap calls
  // outruns the flusher, and dropping an event is cheaper than recording
  // it, which would be priced instead. Real programs record far slower.
  int ring_events_per_iteration = 0;
  // Costs each iteration also pays, measured by earlier cases: site, how
  // many times an iteration pays it.
  std::vector<std::pair<std::string, double>> subtract;
  // Profiling set-up of the profiled run(s).
  std::vector<std::string> rule_files;
  std::vector<std::string> simulator_patterns;
  bool cupti = false;
  std::string cupti_path;
  std::vector<std::string> environment;  // For both runs.
  // False for a cost no program here pays (CUPTI's on the fake runtime):
  // its doubt then warns only (calibration_verdict.h).
  bool matters = true;
  uint64_t iterations = 0;  // Set by sizing.
  uint64_t burst = 0;       // Iterations per burst; 0: one loop.
};

// Progress: a status line on a terminal (none otherwise: logs stay
// readable), and lines of their own: news of a case, then its result.
class Progress {
 public:
  explicit Progress(int total);
  // Grow: `steps` more than planned (a cost measured again).
  void Grow(int steps) { total_ += steps; }
  void Step(const std::string& what);
  // CaseDone: a line of its own (a finished case, or news about one).
  void CaseDone(const std::string& line);

 private:
  int total_;
  int done_ = 0;
  bool tty_;
};

// DisturbanceSeam: the test seam RLSCOPE_CALIBRATE_TEST_DISTURB=SITE=NS
// (for tests only): repetition i of SITE (counted over all its rounds, from
// 0) has one side reported (i + 1) x NS per event slower, the baseline on
// even repetitions and the profiled side on odd ones: a machine ever
// busier, hitting either side. The least disturbed repetitions are then
// the first ones, whose differences disagree by more than they measure
// however often the site is measured again: the deterministic stand-in for
// a machine too busy to calibrate on.
inline constexpr char kTestDisturbEnv[] = "RLSCOPE_CALIBRATE_TEST_DISTURB";
struct DisturbanceSeam {
  std::string site;
  double ns_per_event = 0;
};
absl::StatusOr<DisturbanceSeam> ParseDisturbanceSeam(const char* setting);

struct SweepSettings {
  int repetitions = 5;
  bool quick = false;  // Shorter loops (tests).
};

using SiteMeasurements = std::map<std::string, calibration::SiteMeasurement, std::less<>>;

// RunSweep: measures every case (or returns why one could not be, naming
// it; cancelled when interrupted): the per-event costs in turns, then the
// start-up costs one after the other, each the rest that the costs settled
// before it leave. `between` runs after each turn (the caller samples the
// load average there).
absl::StatusOr<SiteMeasurements> RunSweep(std::vector<Case> cases, const SweepSettings& settings,
                                          const std::filesystem::path& scratch, const DisturbanceSeam& seam,
                                          Progress& progress, const std::function<void()>& between);

// CaptureOutput: runs `command` (no shell) and returns its stdout, or
// nullopt when it cannot be run or fails.
std::optional<std::string> CaptureOutput(const std::vector<std::string>& command,
                                         const std::vector<std::string>& environment,
                                         const std::filesystem::path& scratch);

// ListCases: the cases a workload (`command` --list) can run here; empty
// when it cannot be run.
std::vector<std::string> ListCases(std::vector<std::string> command, const std::vector<std::string>& environment,
                                   const std::filesystem::path& scratch);

// Trimmed: `text` without trailing newlines and spaces.
std::string Trimmed(std::string text);

}  // namespace rlscope::collector::calibrate

#endif  // RLSCOPE_COLLECTOR_CALIBRATION_SWEEP_H_
