// RunDiff: two or more analysed runs side by side (`rlscope diff`). Pure
// functions over RunReport; renderers (diff_text, diff_json) only format.
//
// The first run is the baseline. Runs are compared per operation (matched
// by exact name; processes summed, since pids differ between runs) and per
// category within it. A quantity a run does not have is absent (nullopt),
// never 0: an operation or a category that did not occur in a run was not
// measured as zero, it was not there. Against the baseline each later run
// gets a Change: "both" (ratio = run / baseline, delta = run - baseline),
// "new" (absent in the baseline), "gone" (absent in the run) or "absent"
// (in neither).
//
// Time is the report's `rows`: for a corrected report the estimated
// unprofiled rows, else the measured ones. CPU-side categories (resources
// CPU and CPU+GPU merged) are thread time; their share is of the run's
// total thread time. GPU categories (Kernel, Memcpy, Memset) are device
// busy time; their share is of the run's total GPU row time.
#ifndef RLSCOPE_REPORT_RUN_DIFF_H_
#define RLSCOPE_REPORT_RUN_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/category.h"
#include "report/run_report.h"

namespace rlscope::report {

enum class ChangeStatus { kBoth, kNew, kGone, kAbsent };
std::string_view ChangeStatusName(ChangeStatus status);  // "both", "new", "gone", "absent"

// Verdict: whether a change of a time is one to act on. A time is worse
// (a regression) when it grew by at least kVerdictRatio and is a visible
// part of its run (at least kVerdictShare of the run's total, where the
// quantity has shares); better when it shrank as much. Smaller changes are
// kSame: a quiet machine's run-to-run spread is a few percent. Per step,
// start-up, teardown and the totals are not judged: divided by steps they
// shrink as a run gets longer, whatever its code does.
enum class Verdict { kSame, kWorse, kBetter };
std::string_view VerdictName(Verdict verdict);  // "same", "worse", "better"
inline constexpr double kVerdictRatio = 1.05;
inline constexpr double kVerdictShare = 0.01;

struct Change {
  ChangeStatus status = ChangeStatus::kAbsent;
  std::optional<double> ratio;       // Only for kBoth with a non-zero baseline.
  std::optional<double> delta;       // Only for kBoth.
  Verdict verdict = Verdict::kSame;  // Only times (DiffValues::is_time) get another.
};

// CompareValues: a run's value against the baseline's (see file comment).
Change CompareValues(std::optional<double> baseline, std::optional<double> value);

// One quantity across runs.
struct DiffValues {
  bool integral = true;                       // ns or counts (else a per-instance rate or a fraction).
  bool is_time = false;                       // A time, where more is worse: its changes get verdicts.
  std::vector<std::optional<double>> values;  // Per run; nullopt: absent from that run.
  std::vector<std::optional<double>> shares;  // Per run, of the run's total; empty: not applicable.
  std::vector<Change> changes;                // Per run against run 0 (changes[0] compares it with itself).
};

struct DiffCategory {
  Category category = Category::kNative;
  bool gpu = false;  // Device time (Kernel/Memcpy/Memset), else thread time.
  DiffValues time;
};

// Transitions from one level to another per instance of the operation.
struct DiffTransition {
  Category from = Category::kPython;
  Category to = Category::kNative;
  DiffValues per_instance;
};

struct DiffOperation {
  std::string name;
  DiffValues cpu_time;                   // Thread time in the operation, all CPU-side categories.
  DiffValues gpu_time;                   // Device time attributed to it (all absent without GPU rows).
  std::vector<DiffCategory> categories;  // Display order of Category.
  DiffValues instances;                  // Times entered (from the transitions; absent without any).
  std::vector<DiffTransition> transitions;
};

struct DiffRunSummary {
  std::string label;
  std::string dir;
  std::vector<std::string> command;
  int exit_code = 0;
  bool corrected = false;
  bool data_damaged = false;
  int64_t wall_ns = 0;                       // Profiled (meta.json).
  std::optional<int64_t> corrected_wall_ns;  // When corrected.
  int64_t total_wall_ns = 0;                 // corrected_wall_ns when present, else wall_ns.
  int64_t thread_ns = 0;                     // Sum of CPU-side rows.
  int64_t gpu_ns = 0;                        // Sum of GPU rows.
  std::optional<int64_t> gpu_busy_ns;        // Absent when no process had GPU capture.
  std::optional<double> gpu_busy_fraction;   // gpu_busy_ns / total_wall_ns.
  // nvidia-smi's utilization.gpu over the profiled run, of the GPU with the
  // highest mean (absent when nvidia-smi was not sampled). Fractions.
  std::optional<int> nvidia_smi_gpu;
  std::optional<double> nvidia_smi_mean;
  std::optional<double> nvidia_smi_max;
};

struct RunDiff {
  std::vector<DiffRunSummary> runs;
  DiffValues total_wall, thread_time, gpu_time, gpu_busy, gpu_busy_fraction, nvidia_smi_mean;
  // Steps: the times each run entered the step operation (DiffOptions);
  // a vector environment's step of N environments is one. Absent in a
  // run that never entered it. wall_per_step: total wall time / steps.
  std::string step_operation;
  DiffValues steps, wall_per_step;
  // Every time (totals, operations, categories) is per step: divided by
  // the run's steps (absent in a run without steps). Shares, fractions,
  // instances and transitions per instance are unchanged. per_step_why
  // says why it is (asked for, or the runs' steps differ), "" when not.
  bool per_step = false;
  std::string per_step_why;
  // Ordered by the baseline's thread time (largest first), then operations
  // the baseline lacks by their largest time in another run.
  std::vector<DiffOperation> operations;
  bool mixed_correction = false;  // Some runs corrected, some not.
  std::vector<std::string> warnings;
};

struct DiffInput {
  std::string label;
  std::string dir;
  const RunReport* report = nullptr;
};

// RunLabels: each directory's basename (trailing slashes ignored); where
// basenames repeat, every run gets "#N" appended, N its 1-based position.
std::vector<std::string> RunLabels(const std::vector<std::string>& dirs);

// PerStep: whether times are divided by each run's steps. kAuto divides
// when every run has steps and some run's count differs from the
// baseline's by more than kStepsDiffer (comparing totals of runs of
// different lengths says nothing about the code); kOn always, kOff never.
enum class PerStep { kAuto, kOn, kOff };
inline constexpr double kStepsDiffer = 0.01;

struct DiffOptions {
  // The operation whose instances count steps (StepsOf, run_report.h).
  std::string step_operation = kStepOperation;
  PerStep per_step = PerStep::kAuto;
};

// DiffRuns: compares runs[1..] with runs[0]. Needs at least one run.
RunDiff DiffRuns(const std::vector<DiffInput>& runs, const DiffOptions& options = {});

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_DIFF_H_
