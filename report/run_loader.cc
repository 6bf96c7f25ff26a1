#include "report/run_loader.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <tuple>

#include "absl/strings/str_format.h"
#include "format/rule_file.h"
#include "format/run_layout.h"
#include "format/trace_reader.h"
#include "report/capture_windows.h"
#include "report/job_directory.h"
#include "report/launcher_processes.h"
#include "report/library_classifier.h"
#include "report/lost_processes.h"
#include "report/memory_budget.h"
#include "report/native_symbolizer.h"
#include "report/report_vocabulary.h"
#include "report/timeline_builder.h"

namespace rlscope::report {

namespace {

namespace fs = std::filesystem;

// RunTraces: a run directory's trace files (DIR/trace/*.rlt, sorted), their
// size, and what memory_budget.h makes of it.
struct RunTraces {
  std::vector<fs::path> files;
  uint64_t bytes = 0;
  MemoryNeed need;
  std::optional<uint64_t> available;  // Unknown: no check.
};

absl::StatusOr<RunTraces> ListRunTraces(const std::string& run_dir) {
  std::error_code error;
  if (!fs::is_directory(run_dir, error)) {
    return absl::NotFoundError(absl::StrFormat("%s: no such directory", run_dir));
  }
  const fs::path trace_dir = fs::path(run_dir) / run_layout::kTraceDir;
  if (IsJobDirectory(run_dir)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is a merged job's directory ('rlscope merge'), which holds its nodes' reports but no traces: "
        "'rlscope report %s', 'rlscope diff' and 'rlscope export %s --chrome FILE' read it (its report is %s, "
        "%s for tools); for the rest, use each node's run directory",
        run_dir, run_dir, run_dir, (fs::path(run_dir) / run_layout::kJobText).string(),
        (fs::path(run_dir) / run_layout::kJobJson).string()));
  }
  if (!fs::is_directory(trace_dir, error)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not an rlscope run directory (it has no trace/ subdirectory; `rlscope run --out DIR` makes one)",
        run_dir));
  }
  RunTraces traces;
  for (const fs::directory_entry& entry : fs::directory_iterator(trace_dir, error)) {
    if (entry.path().extension() != run_layout::kTraceExtension) continue;
    traces.files.push_back(entry.path());
    // The stream's size, not the file's: a compressed trace is ~10x smaller
    // than the memory its analysis needs.
    traces.bytes += collector::TraceStreamBytes(entry.path().string());
  }
  std::sort(traces.files.begin(), traces.files.end());
  traces.need = EstimateReportMemory(traces.bytes);
  absl::StatusOr<std::optional<uint64_t>> available = MemoryForReport();
  if (!available.ok()) return available.status();
  traces.available = *available;
  return traces;
}

// TooLarge: the refusal when not even the uncorrected analysis would fit
// in memory (memory_budget.h): being killed midway helps nobody.
absl::Status TooLarge(const std::string& run_dir, const RunTraces& traces) {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: analysing its %s of trace needs about %s of memory, and %s is available; the trace is kept: analyse it "
      "where there is more memory (`rlscope report %s`), or set %s=unlimited to try anyway",
      run_dir, FormatBytes(traces.bytes), FormatBytes(traces.need.uncorrected), FormatBytes(*traces.available), run_dir,
      kReportMemoryEnv));
}

// CorrectionTooLarge: why the correction's data is not kept.
std::string CorrectionTooLarge(const std::string& run_dir, const RunTraces& traces) {
  return absl::StrFormat(
      "correcting its %s of trace needs about %s of memory, and %s is available (uncorrected: %s); `rlscope report "
      "%s` where there is more memory corrects it, or set %s=unlimited to try anyway",
      FormatBytes(traces.bytes), FormatBytes(traces.need.corrected), FormatBytes(*traces.available),
      FormatBytes(traces.need.uncorrected), run_dir, kReportMemoryEnv);
}

// MergeExecChains: streams of one process (same pid and kernel start time)
// come from exec()s; merge them in the order they started. A reused pid
// stays a separate process.
std::vector<ProcessTimeline> MergeExecChains(std::vector<ProcessTimeline> streams) {
  std::stable_sort(streams.begin(), streams.end(), [](const ProcessTimeline& a, const ProcessTimeline& b) {
    return std::tie(a.pid, a.proc_start_ticks, a.begin_ns) < std::tie(b.pid, b.proc_start_ticks, b.begin_ns);
  });
  std::vector<ProcessTimeline> processes;
  for (ProcessTimeline& stream : streams) {
    if (!processes.empty() && SameProcess(processes.back(), stream)) {
      MergeExecChain(processes.back(), std::move(stream));
    } else {
      processes.push_back(std::move(stream));
    }
  }
  return processes;
}

// Decode: the run's files once its traces are listed.
DecodedRun Decode(const std::string& run_dir, const std::vector<fs::path>& files, bool for_correction) {
  std::error_code error;
  DecodedRun run;
  run.run_dir = run_dir;
  run.kept_for_correction = for_correction;
  std::vector<std::string>& problems = run.problems;
  absl::StatusOr<RunMetadata> loaded = ReadRunMetadata((fs::path(run_dir) / run_layout::kMeta).string());
  if (loaded.ok()) {
    run.metadata = *std::move(loaded);
  } else {
    run.metadata.recorded = false;
    problems.push_back(absl::StrFormat("%s; command, exit code and wall time are unknown", loaded.status().message()));
  }
  for (const std::string& problem : run.metadata.collector_problems) problems.push_back(problem);

  // The rules the run used (copied into DIR/rules/ by `rlscope run`).
  RuleSet rules;
  std::vector<fs::path> rule_files;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(run_dir) / run_layout::kRulesDir, error)) {
    if (entry.path().extension() == ".rules") rule_files.push_back(entry.path());
  }
  std::sort(rule_files.begin(), rule_files.end());
  for (const fs::path& file : rule_files) {
    std::string rules_error;
    if (!LoadRuleFile(file.string(), rules, &rules_error)) problems.push_back(rules_error);
  }
  LibraryClassifier classifier(rules.libraries);
  NativeSymbolizer symbolizer;

  run.names.Intern("(none)");
  std::vector<ProcessTimeline> processes;
  for (const fs::path& file : files) {
    TimelineBuilder builder(run.names, &classifier, &symbolizer, &rules.operations);
    builder.CollectOverhead(for_correction);
    absl::StatusOr<collector::TraceReadResult> read =
        collector::ReadTraceFile(file.string(), [&](const wire::Frame& frame, uint64_t) { builder.AddFrame(frame); });
    if (!read.ok()) {
      problems.push_back(std::string(read.status().message()));
      run.data_damaged = true;
      continue;
    }
    ProcessTimeline process = builder.Finish();
    if (read->damage) {
      run.data_damaged = true;
      problems.push_back(*read->damage);
      process.problems.push_back(*read->damage);
    }
    processes.push_back(std::move(process));
  }
  if (files.empty()) problems.push_back("no trace files: no process reported to the collector");
  run.processes = MergeExecChains(std::move(processes));
  MarkLaunchers(run.processes, run.names);
  for (ProcessTimeline& process : run.processes) ApplyCaptureWindows(process);
  for (std::string& problem : LostChildProblems(run.processes)) problems.push_back(std::move(problem));

  const fs::path nvidia_smi_csv = fs::path(run_dir) / run_layout::kNvidiaSmiCsv;
  const int64_t start_unix_ns = run.metadata.start_unix_ns;
  if (fs::exists(nvidia_smi_csv, error) && start_unix_ns > 0) {
    run.nvidia_smi =
        SummarizeGpuUtilization(nvidia_smi_csv.string(), (fs::path(run_dir) / run_layout::kNvidiaSmiStderr).string(),
                                start_unix_ns, start_unix_ns + run.metadata.wall_ns);
  }
  return run;
}

}  // namespace

absl::StatusOr<DecodedRun> LoadRun(const std::string& run_dir, const LoadRequest& request) {
  absl::StatusOr<RunTraces> traces = ListRunTraces(run_dir);
  if (!traces.ok()) return traces.status();
  // A corrected analysis needs about 2.5 times the memory of an
  // uncorrected one: where only that fits, the correction's data is not kept.
  std::string correction_dropped;
  switch (PlanReport(traces->need, traces->available, request.for_correction)) {
    case ReportPlan::kTooLarge: return TooLarge(run_dir, *traces);
    case ReportPlan::kUncorrectedOnly: correction_dropped = CorrectionTooLarge(run_dir, *traces); break;
    case ReportPlan::kAsAsked: break;
  }
  DecodedRun run = Decode(run_dir, traces->files, request.for_correction && correction_dropped.empty());
  run.correction_dropped = std::move(correction_dropped);
  return run;
}

}  // namespace rlscope::report
