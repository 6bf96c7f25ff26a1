// RunReport: the analysed run — the breakdown rows per process and per
// thread plus everything the user should know about the data's quality.
// Renderers (report_json, report_text) only format it.
//
// What the rows partition: for each process, the sum over its traced
// threads of each thread's traced lifetime. A thread is traced once it
// records an event (a process's first thread always is); its lifetime runs
// from its creation to its exit (or the process's end). So one process's
// rows add up to thread-seconds, which equals the process's traced wall time
// when it has one traced thread. Exception: a helper thread (no operations
// of its own, no Python; it takes the main thread's operations) counts only
// its time inside recorded calls, not its waiting. Thread time while a GPU
// of the process was busy has resource CPU+GPU, else CPU.
//
// Wait (category.h): time a thread spent blocked in a call the Python hook
// recognised (lock, queue, Event, sleep, select, socket, pipe read,
// waitpid). A thread's own rows include it (they partition its lifetime);
// the process-level rows (RunReport::rows, and so every operation total,
// share, export and diff built from them) leave it out: it is
// ProcessReport::wait_ns instead. An idle thread therefore adds nothing to
// any operation.
//
// GPU rows (resource GPU; categories Kernel, Memcpy, Memset) are separate:
// they partition each device's busy time (gpu_analysis.h), so a process's
// GPU rows add up to device-seconds of busy time.
#ifndef RLSCOPE_REPORT_RUN_REPORT_H_
#define RLSCOPE_REPORT_RUN_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/breakdown.h"
#include "report/collective_calls.h"
#include "report/decoded_run.h"
#include "report/gpu_analysis.h"
#include "report/gpu_utilization.h"
#include "report/instance_durations.h"
#include "report/job_ranks.h"
#include "report/overhead_correction.h"
#include "report/process_timeline.h"
#include "report/run_metadata.h"
#include "report/thread_analysis.h"
#include "report/unmatched_functions.h"

namespace rlscope::report {

struct BreakdownRow {
  int pid = 0;
  std::string operation;
  Resource resource = Resource::kCpu;
  Category category = Category::kNative;
  int64_t ns = 0;
};

struct ThreadReport {
  uint32_t tid = 0;
  std::string name;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint64_t events = 0;
  uint64_t dropped_events = 0;
  uint64_t cuda_api_calls = 0;
  // A helper thread whose rows cover only its time inside recorded calls
  // (thread_analysis.h); otherwise the rows cover its whole lifetime.
  bool active_time_only = false;
  std::vector<BreakdownRow> rows;
};

// How often an operation crossed from one stack level into another, and
// how many times the operation was entered (transitions per iteration =
// count / operation_instances).
struct TransitionRow {
  std::string operation;
  Category from = Category::kPython;
  Category to = Category::kNative;
  uint64_t count = 0;
  uint64_t operation_instances = 0;
};

// A Python source line and the native time its calls took (inclusive).
struct LineRow {
  std::string operation;
  std::string location;  // "qualname (file:firstline)" of the code.
  uint32_t line = 0;
  int64_t ns = 0;
  uint64_t calls = 0;
  // Of ns, the calls inside no other native call (ns counts a callback's
  // calls again inside the call that made it; this never counts twice).
  int64_t outer_ns = 0;
  // How the line is shown (source_lines.h), filled once the report is
  // built: the function, the file (relative to the run's working
  // directory when under it), the line's text ("" when unknown), and
  // whether it is the user's own code (else an installed package's or the
  // standard library's).
  std::string function;
  std::string file;
  std::string source;
  bool user_code = false;
};

// A CPU-side breakdown row split by the Python line that caused the time
// (located_breakdown.h): `location` "" where no line is known.
struct LocatedRow {
  std::string operation;
  std::string location;  // "qualname (file:firstline)" of the calling code, or "".
  uint32_t line = 0;
  Resource resource = Resource::kCpu;
  Category category = Category::kNative;
  int64_t ns = 0;
};

struct ProcessReport {
  int pid = 0;
  int ppid = 0;
  int forked_from = 0;
  std::string executable;
  std::vector<std::string> argv;
  LauncherRank rank;  // As its launcher told it; launcher "" when none did.
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t begin_unix_ns = 0;     // CLOCK_REALTIME at begin_ns; 0: not known.
  int64_t traced_thread_ns = 0;  // Sum of the CPU-side rows (resource CPU or CPU+GPU): work, no Wait.
  int64_t wait_ns = 0;           // The threads' Wait (blocked) time, not in the rows.
  bool ended_cleanly = false;
  uint64_t events = 0;
  uint64_t dropped_events = 0;
  std::vector<ThreadReport> threads;  // Their rows include Wait.
  std::vector<TransitionRow> transitions;
  // How many times each operation was entered (summed over the threads),
  // with or without transitions: the divisor of per-instance figures.
  std::map<std::string, uint64_t> operation_instances;
  // Per operation with instances, how long they took (instance_durations.h),
  // summed over the threads; largest total first.
  std::vector<InstanceStats> instance_stats;
  // Capture windows (capture_windows.h): the process's captured intervals
  // (absent: all of it was captured; empty: none), and the operations it
  // entered in its whole life, captured or not (operation_instances above
  // are then the windows').
  std::optional<IntervalList> captured;
  std::map<std::string, uint64_t> whole_run_instances;
  // Top lines per operation, by time: the user's own lines behind the
  // native calls (the line in train.py that called into torch), falling
  // back to the calling line where no user code was on the stack; and the
  // calling (innermost) lines themselves, mostly library code.
  std::vector<LineRow> python_lines;
  std::vector<LineRow> library_lines;
  // Its time in no operation and the functions it went to, with rules that
  // would name them (unmatched_functions.h).
  UnmatchedTime unmatched;
  // Only when asked for (LoadRunReport's `locate_lines`): the thread rows
  // split by line; they sum to traced_thread_ns.
  std::vector<LocatedRow> located_rows;
  GpuAnalysis gpu;
  // The collectives its threads issued (collective_calls.h), in start
  // order, timed on the measured clock (the same for every process of the
  // run, as the job view needs: a corrected clock is each thread's own);
  // `operation` indexes collective_operations.
  std::vector<CollectiveCall> collectives;
  std::vector<std::string> collective_operations;
  std::vector<std::string> problems;
};

struct RunReport {
  RunMetadata metadata;
  // Overhead correction: when `corrected`, `rows`, `processes`
  // and the GPU figures describe the estimated unprofiled run and
  // `uncorrected_rows` what was measured; `corrected_wall_ns` estimates the
  // command's wall time without rlscope (meta.json's wall_ns is the
  // profiled one). Uncorrected reports (no calibration for the machine)
  // leave corrected_wall_ns empty and say why in `correction_message`.
  bool corrected = false;
  std::optional<int64_t> corrected_wall_ns;
  std::vector<BreakdownRow> uncorrected_rows;
  std::string correction_message;
  // The calibration was there, but the corrected analysis would not have
  // fitted in memory (memory_budget.h): `correction_message` says so.
  bool correction_skipped_for_memory = false;
  // The calibration file used ("" when uncorrected) and what the
  // correction estimated, summed over processes.
  std::string calibration_file;
  // That calibration's verdict and what was seen making it (empty
  // verdict: an older file).
  calibration::CalibrationQuality calibration_quality;
  ProcessCorrection overhead;
  // Uncertainty of corrected_wall_ns from the calibration's spread.
  int64_t corrected_wall_spread_ns = 0;
  std::vector<BreakdownRow> rows;  // All processes, process-level.
  std::vector<ProcessReport> processes;
  // Problems with the run's data as a whole (damaged trace files, ...).
  std::vector<std::string> problems;
  // True when some trace file was unreadable or damaged: the report then
  // covers only what could be read.
  bool data_damaged = false;
  // Time some GPU of any traced process was busy (the union), and what
  // nvidia-smi claimed meanwhile (absent when it was not sampled).
  int64_t gpu_busy_ns = 0;
  std::optional<GpuUtilization> nvidia_smi;
  // Environment steps (StepsOf with kStepOperation), the divisor of every
  // "per step" figure; 0 when no step was seen.
  uint64_t steps = 0;
  // Capture windows: whether some process was captured in windows only;
  // then the union of every process's windows, its length, and the steps
  // of the whole run (captured or not; StepsOf over whole_run_instances).
  bool windowed = false;
  IntervalList capture_windows;
  int64_t captured_ns = 0;
  uint64_t whole_run_steps = 0;
  // The whole run estimated from a windowed one: per operation with
  // instances in the windows, its CPU thread time there divided by those
  // instances, times the instances of the whole run (every process
  // summed). Start-up, teardown and time in no operation have no
  // instances and are not estimated. Each level (category) of an
  // operation is scaled alike: the window's mix of levels per instance is
  // taken to hold for the whole run. Largest estimate first.
  struct Estimate {
    std::string operation;
    uint64_t window_instances = 0;
    uint64_t run_instances = 0;
    int64_t window_ns = 0;
    int64_t estimated_ns = 0;
    std::map<Category, int64_t> window_ns_by_level;
    std::map<Category, int64_t> estimated_ns_by_level;
  };
  std::vector<Estimate> whole_run_estimate;
  // Ranks of distributed jobs among the processes (job_ranks.h).
  std::vector<JobReport> jobs;
};

// The operation whose instances count environment steps: one call of an
// environment's step (inferred or explicit).
inline constexpr char kStepOperation[] = "simulation";

// StepsOf: the instances of `operation` in the process that entered it
// most. A vector environment's step counts once in the process that calls
// it and once in each worker process that steps a copy, so the largest
// count is that of the loop; independent actor processes give the steps of
// one actor. `whole_run`: counted over each process's whole life, not
// only its capture windows.
uint64_t StepsOf(const RunReport& report, const std::string& operation, bool whole_run = false);

// InstancesOf: how many times the process entered each operation: in its
// capture windows (all of it when captured whole), or with `whole_run` in
// its whole life.
const std::map<std::string, uint64_t>& InstancesOf(const ProcessReport& process, bool whole_run);

// BuildRunReport: analyses decoded processes (ordered by start time).
// `locate_lines`: also fill each process's located_rows.
RunReport BuildRunReport(RunMetadata metadata, std::vector<ProcessTimeline> processes, NameTable& names,
                         std::vector<std::string> problems, bool locate_lines = false);

// AnalysisOptions: how AnalyseRun analyses a run.
struct AnalysisOptions {
  // Correct with this calibration (kept by the caller); null: uncorrected.
  const calibration::OverheadModel* model = nullptr;
  std::string calibration_file;  // The model's file, named in the report ("": in memory).
  std::string uncorrected_why;   // Without a model: why (the report's "uncorrected: ..." line).
  bool locate_lines = false;     // Also fill each process's located_rows.
};

// CorrectionSource: the calibration a run's report is corrected with:
// the one asked for, else the run's own DIR/calibration.json.
struct CorrectionSource {
  std::optional<calibration::OverheadModel> model;
  std::string file;     // Where it was (to be) read from; "" when there is none.
  std::string missing;  // Without a model: why (the report's "uncorrected: ..." line).
  // Options: AnalysisOptions that correct with this source.
  AnalysisOptions Options(bool locate_lines = false) const {
    return {model ? &*model : nullptr, file, missing, locate_lines};
  }
};
CorrectionSource FindCorrection(const std::string& run_dir, const std::string& calibration_path);

// AnalyseRun: the report of a decoded run (run_loader.h), consumed. A
// model corrects it only if the run was decoded for correction and the
// model has costs for every Python version the run used; otherwise the
// report is uncorrected and its correction_message says why.
RunReport AnalyseRun(DecodedRun run, const AnalysisOptions& options);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_REPORT_H_
