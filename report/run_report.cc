#include "run_report.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/strings/str_format.h"
#include "code_origin.h"
#include "library_classifier.h"
#include "lost_processes.h"
#include "memory_budget.h"
#include "overlap_sweep.h"
#include "rule_file.h"
#include "run_layout.h"
#include "source_lines.h"
#include "timeline_builder.h"
#include "trace_reader.h"

namespace rlscope::report {

namespace {

std::vector<BreakdownRow> ToRows(int pid, const Breakdown& breakdown, const NameTable& names) {
  std::vector<BreakdownRow> rows;
  rows.reserve(breakdown.size());
  for (const auto& [key, ns] : breakdown) {
    if (ns <= 0) continue;
    rows.push_back({pid, names.Name(key.operation), key.resource, key.category, ns});
  }
  return rows;
}

constexpr size_t kLinesPerOperation = 10;

std::vector<TransitionRow> ToTransitionRows(const ThreadAnalysis& analysis, const NameTable& names) {
  std::vector<TransitionRow> rows;
  for (const auto& [key, count] : analysis.transitions) {
    const auto instances = analysis.instances.find(key.operation);
    rows.push_back({names.Name(key.operation), key.from, key.to, count,
                    instances != analysis.instances.end() ? instances->second : 0});
  }
  return rows;
}

std::vector<LineRow> ToLineRows(const std::map<LineKey, LineCost>& analysed, const NameTable& names) {
  std::map<int32_t, std::vector<LineRow>> by_operation;
  for (const auto& [key, cost] : analysed) {
    // How each line is shown is filled later (DescribeLines).
    LineRow row;
    row.operation = names.Name(key.operation);
    row.location = names.Name(key.location);
    row.line = key.line;
    row.ns = cost.ns;
    row.calls = cost.calls;
    row.outer_ns = cost.outer_ns;
    by_operation[key.operation].push_back(std::move(row));
  }
  std::vector<LineRow> rows;
  for (auto& [operation, lines] : by_operation) {
    std::sort(lines.begin(), lines.end(), [](const LineRow& a, const LineRow& b) { return a.ns > b.ns; });
    if (lines.size() > kLinesPerOperation) lines.resize(kLinesPerOperation);
    rows.insert(rows.end(), lines.begin(), lines.end());
  }
  return rows;
}

// CopyForAnalysis: what AnalyseThread consumes of `thread`, without the
// overhead sites and windows (only the correction reads those, and they
// are as many as the events).
ThreadTimeline CopyForAnalysis(ThreadTimeline& thread) {
  std::vector<OverheadSite> sites = std::move(thread.overhead_sites);
  std::vector<OverheadWindow> windows = std::move(thread.overhead_windows);
  ThreadTimeline copy = thread;
  thread.overhead_sites = std::move(sites);
  thread.overhead_windows = std::move(windows);
  return copy;
}

// AnalyseProcess: the process's report; its summed breakdown goes to `total`.
// `gpu_busy`: the process's GpuBusyIntervals. Consumes the threads' event
// lists (see AnalyseThread), unless `keep_process`: then each thread is
// analysed from a copy made just before (one thread's copy at a time is
// extra) and the process is left as it was. `measured` (may be null): the
// measured analysis of this process when `process` is its corrected
// timeline, and `primary_thread` the thread others inherit operations from
// there (ProcessCorrection): what the measured view decided is kept.
ProcessReport AnalyseProcess(ProcessTimeline& process, const IntervalList& gpu_busy, const std::string& gpu_capture,
                             NameTable& names, Breakdown& total, bool locate_lines, bool keep_process,
                             const ProcessReport* measured = nullptr, int primary_thread = -1) {
  const int32_t none = names.Intern("(none)");
  ProcessReport report;
  report.pid = process.pid;
  report.ppid = process.ppid;
  report.forked_from = process.forked_from;
  report.executable = process.executable;
  report.argv = process.argv;
  report.begin_ns = process.begin_ns;
  report.end_ns = process.end_ns;
  report.ended_cleanly = process.ended_cleanly;
  report.problems = process.problems;
  // Losses the preload counted itself arrive as notices with status
  // "problem", re-sent with growing counts: the last one per topic says it.
  std::map<std::string, std::string> preload_problems;
  for (const CaptureNotice& notice : process.notices) {
    if (notice.status == "problem") preload_problems[notice.topic] = notice.message;
  }
  for (const auto& [topic, message] : preload_problems) report.problems.push_back(message);
  uint64_t thread_dropped = 0;
  ThreadAnalysis process_analysis;
  const IntervalList inherited =
      measured != nullptr ? InheritedOperations(process.threads, primary_thread) : InheritedOperations(process.threads);
  bool used_cuda = !process.gpu_activities.empty();
  for (const ThreadTimeline& thread : process.threads) used_cuda = used_cuda || thread.cuda_api_calls > 0;
  for (ThreadTimeline& thread : process.threads) {
    ThreadReport thread_report;
    thread_report.tid = thread.tid;
    thread_report.name = thread.name;
    thread_report.begin_ns = thread.begin_ns;
    thread_report.end_ns = thread.end_ns;
    thread_report.events = thread.events;
    thread_report.dropped_events = thread.dropped;
    thread_report.cuda_api_calls = thread.cuda_api_calls;
    report.events += thread.events;
    thread_dropped += thread.dropped;
    // Last use of `thread` unless kept: its event lists are consumed.
    const ThreadAnalysis analysis = AnalyseThread(keep_process ? CopyForAnalysis(thread) : std::move(thread), none,
                                                  &inherited, &gpu_busy, locate_lines);
    AddInto(process_analysis, analysis);
    thread_report.rows = ToRows(process.pid, analysis.breakdown, names);
    thread_report.active_time_only = analysis.active_time_only;
    report.threads.push_back(std::move(thread_report));
  }
  total = process_analysis.breakdown;
  // Blocked time is the threads', not any operation's (category.h, kWait).
  for (auto it = total.begin(); it != total.end();) {
    if (it->first.category == Category::kWait) {
      report.wait_ns += it->second;
      it = total.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, ns] : total) report.traced_thread_ns += ns;
  report.gpu = AnalyseGpu(process, process_analysis.launches, inherited, gpu_busy, gpu_capture, used_cuda, names,
                          measured != nullptr ? &measured->gpu : nullptr);
  AddInto(total, report.gpu.rows);
  report.transitions = ToTransitionRows(process_analysis, names);
  for (const auto& [operation, n] : process_analysis.instances) report.operation_instances[names.Name(operation)] += n;
  report.python_lines = ToLineRows(process_analysis.lines, names);
  report.library_lines = ToLineRows(process_analysis.library_lines, names);
  for (const auto& [key, ns] : process_analysis.located) {
    if (ns <= 0 || key.category == Category::kWait) continue;
    report.located_rows.push_back({names.Name(key.operation), key.location == kNoLabel ? "" : names.Name(key.location),
                                   key.line, key.resource, key.category, ns});
  }
  // The Goodbye's count also covers events lost on the way; without one,
  // the per-thread counts are all we know.
  report.dropped_events = std::max(process.dropped_events, thread_dropped);
  if (report.gpu.dropped > 0) {
    report.problems.push_back(
        absl::StrFormat("%d GPU activity record(s) were lost (CUPTI's buffers overflowed): GPU time is undercounted",
                        report.gpu.dropped));
  }
  if (report.gpu.before_launch > 0) {
    report.problems.push_back(absl::StrFormat(
        "%d GPU activit(ies) began before the CUDA call that launched them: GPU and CPU clocks disagree, so "
        "overlap figures are approximate",
        report.gpu.before_launch));
  }
  if (report.dropped_events > 0) {
    report.problems.push_back(
        absl::StrFormat("%d event(s) were dropped by the preload (buffers full or collector unreachable); "
                        "the breakdown undercounts what they covered",
                        report.dropped_events));
  }
  if (process.reconnections > 0) {
    report.problems.push_back(absl::StrFormat(
        "the program closed rlscope's socket to the collector (e.g. os.closerange): the connection was lost and "
        "re-made %d time(s), with %d event(s) lost in between",
        process.reconnections, process.reconnection_lost_events));
  }
  if (!process.ended_cleanly) {
    report.problems.push_back(
        "the process did not end cleanly (killed, crashed or exec'd without flushing), or "
        "its trace was cut (see the run's problems): its trace stops at its last delivered "
        "batch");
  }
  return report;
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

void SortByStart(std::vector<ProcessTimeline>& processes) {
  std::sort(processes.begin(), processes.end(), [](const ProcessTimeline& a, const ProcessTimeline& b) {
    return std::tie(a.begin_ns, a.pid) < std::tie(b.begin_ns, b.pid);
  });
}

// RunReportAssembly: a RunReport built one process at a time (in start
// order), so that a process's timeline can be freed, or corrected, as
// soon as it has been analysed.
class RunReportAssembly {
 public:
  RunReportAssembly(RunMetadata metadata, std::vector<std::string> problems, NameTable& names, bool locate_lines)
      : names_(names), locate_lines_(locate_lines) {
    report_.metadata = std::move(metadata);
    report_.problems = std::move(problems);
  }

  // Add: `keep_process`, `measured` and `primary_thread` as for
  // AnalyseProcess. Returns the process's report (valid until the next Add).
  const ProcessReport& Add(ProcessTimeline& process, bool keep_process, const ProcessReport* measured = nullptr,
                           int primary_thread = -1) {
    const IntervalList gpu_busy = GpuBusyIntervals(process.gpu_activities);
    run_gpu_busy_.insert(run_gpu_busy_.end(), gpu_busy.begin(), gpu_busy.end());
    Breakdown process_total;
    ProcessReport process_report = AnalyseProcess(process, gpu_busy, report_.metadata.gpu_capture, names_,
                                                  process_total, locate_lines_, keep_process, measured, primary_thread);
    for (BreakdownRow& row : ToRows(process.pid, process_total, names_)) report_.rows.push_back(std::move(row));
    report_.processes.push_back(std::move(process_report));
    return report_.processes.back();
  }

  RunReport Finish() && {
    for (const Interval& interval : UnionIntervals(std::move(run_gpu_busy_))) {
      report_.gpu_busy_ns += interval.duration_ns();
    }
    return std::move(report_);
  }

 private:
  RunReport report_;
  NameTable& names_;
  bool locate_lines_;
  IntervalList run_gpu_busy_;  // Every process's busy intervals; their union is the run's.
};

}  // namespace

RunReport BuildRunReport(RunMetadata metadata, std::vector<ProcessTimeline> processes, NameTable& names,
                         std::vector<std::string> problems, bool locate_lines) {
  SortByStart(processes);
  RunReportAssembly assembly(std::move(metadata), std::move(problems), names, locate_lines);
  for (ProcessTimeline& process : processes) {
    assembly.Add(process, /*keep_process=*/false);
    process = ProcessTimeline();  // What the analysis left (GPU activities, ...) is not needed again.
  }
  return std::move(assembly).Finish();
}

namespace {

// PythonVersionOf: "3.11" for a process whose Python hook reported
// "3.11.2" (a fork() child that did not say takes its parent's); "" if it
// ran no Python under the hook.
std::string PythonVersionOf(const ProcessTimeline& process, const std::vector<ProcessTimeline>& all, int depth = 0) {
  for (const CaptureNotice& notice : process.notices) {
    if (notice.topic != "python") continue;
    const size_t first = notice.message.find('.');
    if (first == std::string::npos) return notice.message;
    return notice.message.substr(0, notice.message.find('.', first + 1));
  }
  if (process.forked_from != 0 && depth < 16) {  // (Reused pids could make a cycle.)
    for (const ProcessTimeline& parent : all) {
      if (parent.pid == process.forked_from && &parent != &process) return PythonVersionOf(parent, all, depth + 1);
    }
  }
  return "";
}

// PythonVersions: PythonVersionOf each process, in order.
std::vector<std::string> PythonVersions(const std::vector<ProcessTimeline>& processes) {
  std::vector<std::string> versions;
  for (const ProcessTimeline& process : processes) versions.push_back(PythonVersionOf(process, processes));
  return versions;
}

constexpr char kHowToCalibrate[] = "run `rlscope calibrate` once on this machine (a few minutes)";

// CorrectionProblem: why `model` cannot correct these processes, whose
// Python versions are `versions` ("" if it can).
std::string CorrectionProblem(const calibration::OverheadModel& model, const std::vector<ProcessTimeline>& processes,
                              const std::vector<std::string>& versions) {
  const std::vector<std::string> calibrated = model.PythonVersions();
  for (size_t i = 0; i < processes.size(); ++i) {
    const std::string& version = versions[i];
    if (version.empty() || std::find(calibrated.begin(), calibrated.end(), version) != calibrated.end()) continue;
    return absl::StrFormat(
        "the calibration has no costs for Python %s (process %d); run `rlscope calibrate "
        "--python PYTHON` with that interpreter",
        version, processes[i].pid);
  }
  return "";
}

// AddInto: one process's correction into the run's total.
void AddInto(ProcessCorrection& total, const ProcessCorrection& part) {
  total.estimated_ns += part.estimated_ns;
  total.removed_ns += part.removed_ns;
  total.unplaced_ns += part.unplaced_ns;
  for (const auto& [site, tally] : part.by_site) {
    SiteOverhead& sum = total.by_site[site];
    sum.events += tally.events;
    sum.ns += tally.ns;
    sum.spread_ns += tally.spread_ns;
  }
  for (const auto& [site, count] : part.uncalibrated) total.uncalibrated[site] += count;
}

// RunTraces: a run directory's trace files (DIR/trace/*.rlt, sorted), their
// size, and what memory_budget.h makes of it; read once per analysis.
struct RunTraces {
  std::vector<std::filesystem::path> files;
  uint64_t bytes = 0;
  MemoryNeed need;
  std::optional<uint64_t> available;  // Unknown: no check.
};

absl::StatusOr<RunTraces> ListRunTraces(const std::string& run_dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(run_dir, error)) {
    return absl::NotFoundError(absl::StrFormat("%s: no such directory", run_dir));
  }
  const fs::path trace_dir = fs::path(run_dir) / run_layout::kTraceDir;
  if (!fs::is_directory(trace_dir, error)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not an rlscope run directory (it has no trace/ subdirectory; `rlscope run --out DIR` makes one)",
        run_dir));
  }
  RunTraces traces;
  for (const fs::directory_entry& entry : fs::directory_iterator(trace_dir, error)) {
    if (entry.path().extension() != run_layout::kTraceExtension) continue;
    traces.files.push_back(entry.path());
    const uintmax_t size = entry.file_size(error);
    if (!error) traces.bytes += size;
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

// DecodeRun: LoadRunTimelines once the run's traces are listed.
DecodedRun DecodeRun(const std::string& run_dir, const std::vector<std::filesystem::path>& files,
                     bool collect_overhead) {
  namespace fs = std::filesystem;
  std::error_code error;
  DecodedRun run;
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
    builder.CollectOverhead(collect_overhead);
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
  for (std::string& problem : LostChildProblems(run.processes)) problems.push_back(std::move(problem));
  return run;
}

}  // namespace

absl::StatusOr<DecodedRun> LoadRunTimelines(const std::string& run_dir, bool collect_overhead) {
  absl::StatusOr<RunTraces> traces = ListRunTraces(run_dir);
  if (!traces.ok()) return traces.status();
  if (PlanReport(traces->need, traces->available, false) == ReportPlan::kTooLarge) return TooLarge(run_dir, *traces);
  return DecodeRun(run_dir, traces->files, collect_overhead);
}

namespace {

// DescribeLines: how each Python line is shown (source_lines.h): function,
// file relative to the run's working directory, text, whose code it is;
// then what the lines tell of the process's time in no operation.
void DescribeLines(RunReport& report) {
  SourceLines sources(report.metadata.working_directory);
  for (ProcessReport& process : report.processes) {
    for (std::vector<LineRow>* rows : {&process.python_lines, &process.library_lines}) {
      for (LineRow& row : *rows) {
        const CodeLocation location = SplitCodeLocation(row.location);
        row.function = location.function;
        row.file = sources.DisplayPath(location.file);
        row.user_code = OriginOfPath(location.file).kind == CodeOrigin::Kind::kUser;
        // Only the user's files are read: library lines are found by name.
        if (row.user_code) row.source = sources.Text(location.file, row.line);
      }
    }
    process.unmatched = ExplainUnmatched(process);  // From the lines as described.
  }
}

}  // namespace

absl::StatusOr<RunReport> LoadRunReport(const std::string& run_dir, const std::string& calibration_path,
                                        bool locate_lines) {
  namespace fs = std::filesystem;
  std::error_code error;
  // Overhead correction: with the given calibration, else the run's own.
  // Known before decoding, so the decoder keeps what it needs only then.
  std::string model_path = calibration_path;
  if (model_path.empty() && fs::exists(fs::path(run_dir) / run_layout::kCalibration, error)) {
    model_path = (fs::path(run_dir) / run_layout::kCalibration).string();
  }
  std::optional<calibration::OverheadModel> model;
  std::string correction_message;
  if (model_path.empty()) {
    correction_message = absl::StrFormat(
        "uncorrected: no calibration was found for the machine of this run; %s, then profile "
        "again or `rlscope report %s --calibration FILE`",
        kHowToCalibrate, run_dir);
  } else if (absl::StatusOr<calibration::OverheadModel> loaded = calibration::ReadOverheadModel(model_path);
             !loaded.ok()) {
    correction_message = absl::StrFormat("uncorrected: %s", loaded.status().message());
  } else {
    model = *std::move(loaded);
  }

  absl::StatusOr<RunTraces> traces = ListRunTraces(run_dir);
  if (!traces.ok()) return traces.status();
  // A corrected analysis needs about 2.5 times the memory of an
  // uncorrected one: where only that fits, the report is uncorrected.
  bool skipped_for_memory = false;
  switch (PlanReport(traces->need, traces->available, model.has_value())) {
    case ReportPlan::kTooLarge: return TooLarge(run_dir, *traces);
    case ReportPlan::kUncorrectedOnly:
      correction_message = absl::StrFormat(
          "uncorrected: correcting its %s of trace needs about %s of memory, and %s is available (uncorrected: "
          "%s); `rlscope report %s` where there is more memory corrects it, or set %s=unlimited to try anyway",
          FormatBytes(traces->bytes), FormatBytes(traces->need.corrected), FormatBytes(*traces->available),
          FormatBytes(traces->need.uncorrected), run_dir, kReportMemoryEnv);
      model.reset();
      skipped_for_memory = true;
      break;
    case ReportPlan::kAsAsked: break;
  }
  DecodedRun decoded = DecodeRun(run_dir, traces->files, model.has_value());
  RunMetadata metadata = std::move(decoded.metadata);
  NameTable& names = decoded.names;
  std::vector<ProcessTimeline> processes = std::move(decoded.processes);
  SortByStart(processes);
  std::vector<std::string> problems = std::move(decoded.problems);
  const bool data_damaged = decoded.data_damaged;
  const int64_t start_unix_ns = metadata.start_unix_ns, wall_ns = metadata.wall_ns;

  const std::vector<std::string> python_versions = PythonVersions(processes);
  if (model) {
    if (std::string problem = CorrectionProblem(*model, processes, python_versions); !problem.empty()) {
      correction_message = absl::StrFormat("uncorrected: %s", problem);
      model.reset();
    }
  }

  RunReport report;
  if (!model) {
    report = BuildRunReport(std::move(metadata), std::move(processes), names, std::move(problems), locate_lines);
    report.correction_message = correction_message;
    report.correction_skipped_for_memory = skipped_for_memory;
  } else {
    // Per process, in start order: the measured analysis (from copies made
    // thread by thread), then the correction in place and the corrected
    // analysis, then the process is freed. So the report stage holds the
    // decoded run plus one thread's copy, not two copies of the run.
    // Owners are the measured view's in both: the correction decides them
    // before it moves time (overhead_correction.h), and the corrected
    // analysis takes the measured GPU overlap views and inheritance.
    ProcessCorrection total;
    int64_t root_fixed_ns = 0, root_removed_ns = 0;
    double root_spread_ns = 0;
    RunReportAssembly uncorrected(metadata, {}, names, /*locate_lines=*/false);
    RunReportAssembly corrected(std::move(metadata), std::move(problems), names, locate_lines);
    for (size_t i = 0; i < processes.size(); ++i) {
      const std::string& version = python_versions[i];
      const ProcessReport& measured = uncorrected.Add(processes[i], /*keep_process=*/true);
      const ProcessCorrection correction = CorrectProcess(processes[i], *model, version, names);
      corrected.Add(processes[i], /*keep_process=*/false, &measured, correction.primary_thread);
      processes[i] = ProcessTimeline();
      if (i == 0) {  // The first to start (the sort's order): the command's own process.
        root_removed_ns = correction.main_thread_removed_ns;
        root_spread_ns = correction.main_thread_spread_ns;
        const std::string site = version.empty() ? std::string(calibration::kNativeProcess)
                                                 : calibration::PythonSite(calibration::kPythonProcess, version);
        root_fixed_ns = static_cast<int64_t>(model->Cost(site).value_or(0));
      }
      AddInto(total, correction);
    }
    report = std::move(corrected).Finish();
    RunReport measured = std::move(uncorrected).Finish();
    report.uncorrected_rows = std::move(measured.rows);
    report.gpu_busy_ns = measured.gpu_busy_ns;  // GPU time is not corrected (gpu_analysis.h).
    report.corrected = true;
    report.calibration_file = model_path;
    report.calibration_quality = model->quality;
    if (wall_ns > 0) {
      report.corrected_wall_ns = std::max<int64_t>(0, wall_ns - root_removed_ns - root_fixed_ns);
      report.corrected_wall_spread_ns = static_cast<int64_t>(root_spread_ns);
    }
    total.main_thread_removed_ns = root_removed_ns;
    report.overhead = std::move(total);
    if (!report.overhead.uncalibrated.empty()) {
      uint64_t calls = 0;
      for (const auto& [site, count] : report.overhead.uncalibrated) calls += count;
      report.problems.push_back(absl::StrFormat(
          "%d recorded event(s) of %d kind(s) have no calibrated cost (e.g. %s); their overhead is not removed", calls,
          report.overhead.uncalibrated.size(), report.overhead.uncalibrated.begin()->first));
    }
  }
  report.data_damaged = data_damaged;
  DescribeLines(report);
  const fs::path nvidia_smi_csv = fs::path(run_dir) / run_layout::kNvidiaSmiCsv;
  if (fs::exists(nvidia_smi_csv, error) && start_unix_ns > 0) {
    report.nvidia_smi =
        SummarizeGpuUtilization(nvidia_smi_csv.string(), (fs::path(run_dir) / run_layout::kNvidiaSmiStderr).string(),
                                start_unix_ns, start_unix_ns + wall_ns);
    for (const std::string& problem : report.nvidia_smi->problems) report.problems.push_back(problem);
  }
  return report;
}

}  // namespace rlscope::report
