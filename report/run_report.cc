#include "report/run_report.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/strings/str_format.h"
#include "format/code_origin.h"
#include "format/run_layout.h"
#include "report/collective_calls.h"
#include "report/overlap_sweep.h"
#include "report/source_lines.h"

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

ThreadViews ViewsFor(bool locate_lines) { return locate_lines ? ThreadViews::kLocated : ThreadViews::kReport; }

// ReleaseEventLists: frees a thread's lists that grow with its events, the
// bulk of its memory, once it is analysed (the process is not kept for a
// corrected view; the rest goes with the process).
void ReleaseEventLists(ThreadTimeline& thread) {
  IntervalList().swap(thread.cpu_events);
  std::vector<NativeCall>().swap(thread.native_calls);
  std::vector<GpuLaunchPoint>().swap(thread.gpu_launches);
  std::vector<OverheadSite>().swap(thread.overhead_sites);
  std::vector<OverheadWindow>().swap(thread.overhead_windows);
  IntervalList().swap(thread.operations);
  IntervalList().swap(thread.inferred_operations);
  IntervalList().swap(thread.instance_starts);
  std::vector<HookedCollective>().swap(thread.hooked_collectives);
  std::vector<CpuWait>().swap(thread.cpu_waits);
  // The correction's copies (as many as the operations, or the GPU's busy
  // stretches).
  thread.inherited_operations.reset();
  thread.gpu_busy.reset();
}

// NameCollectives: the process's `collectives` (its threads', appended)
// into `report` in start order, their operations indexing its
// collective_operations.
void NameCollectives(std::vector<CollectiveCall> collectives, const NameTable& names, ProcessReport& report) {
  collectives = WithoutServedCollectives(std::move(collectives));
  std::map<int32_t, int32_t> index_of;
  for (const CollectiveCall& call : collectives) {
    auto [it, inserted] = index_of.try_emplace(call.operation, static_cast<int32_t>(index_of.size()));
    if (inserted) report.collective_operations.push_back(names.Name(call.operation));
    report.collectives.push_back({call.begin_ns, call.end_ns, it->second, call.native, call.queued});
  }
}

// AnalyseProcess: the process's report; its summed breakdown goes to `total`.
// `gpu_busy`: the process's GpuBusyIntervals. Frees each thread's event
// lists once analysed, unless `keep_process`: then the process is left as
// it was. `measured` (may be null): the
// measured analysis of this process when `process` is its corrected
// timeline, and `primary_thread` the thread others inherit operations from
// there (ProcessCorrection): what the measured view decided is kept.
ProcessReport AnalyseProcess(ProcessTimeline& process, const IntervalList& gpu_busy, const std::string& gpu_capture,
                             NameTable& names, Breakdown& total, ThreadViews views, bool keep_process,
                             const ProcessReport* measured = nullptr, int primary_thread = -1) {
  const int32_t none = names.Intern("(none)");
  ProcessReport report;
  report.pid = process.pid;
  report.ppid = process.ppid;
  report.forked_from = process.forked_from;
  report.executable = process.executable;
  report.argv = process.argv;
  report.rank = process.rank;
  report.begin_ns = process.begin_ns;
  report.begin_unix_ns = process.begin_unix_ns;
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
    const ThreadAnalysis analysis = AnalyseThread(thread, none, &inherited, &gpu_busy, views);
    // Last use of `thread` unless kept: its event lists go as soon as read.
    if (!keep_process) ReleaseEventLists(thread);
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
  report.captured = process.captured;
  for (const auto& [operation, n] : process.whole_run_instances) report.whole_run_instances[names.Name(operation)] += n;
  for (auto& [operation, durations] : process_analysis.instance_ns) {
    report.instance_stats.push_back(SummariseInstances(names.Name(operation), std::move(durations)));
  }
  std::sort(report.instance_stats.begin(), report.instance_stats.end(),
            [](const InstanceStats& a, const InstanceStats& b) { return a.total_ns > b.total_ns; });
  if (measured != nullptr) {
    report.collectives = measured->collectives;
    report.collective_operations = measured->collective_operations;
  } else {
    NameCollectives(std::move(process_analysis.collectives), names, report);
  }
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

void SortByStart(std::vector<ProcessTimeline>& processes) {
  std::sort(processes.begin(), processes.end(), [](const ProcessTimeline& a, const ProcessTimeline& b) {
    return std::tie(a.begin_ns, a.pid) < std::tie(b.begin_ns, b.pid);
  });
}

// SummariseCapture: the run's capture windows, from its processes'.
void SummariseCapture(RunReport& report) {
  IntervalList windows;
  for (const ProcessReport& process : report.processes) {
    if (!process.captured.has_value()) continue;
    report.windowed = true;
    windows.insert(windows.end(), process.captured->begin(), process.captured->end());
  }
  if (!report.windowed) return;
  report.capture_windows = UnionIntervals(std::move(windows));
  for (const Interval& window : report.capture_windows) report.captured_ns += window.duration_ns();
  report.whole_run_steps = StepsOf(report, kStepOperation, /*whole_run=*/true);
  // Per operation: the windows' time and instances, and the run's instances.
  std::map<std::string, RunReport::Estimate> estimates;
  for (const BreakdownRow& row : report.rows) {
    if (row.resource == Resource::kGpu || row.category == Category::kWait) continue;
    estimates[row.operation].window_ns += row.ns;
    estimates[row.operation].window_ns_by_level[row.category] += row.ns;
  }
  for (const ProcessReport& process : report.processes) {
    for (const auto& [operation, n] : process.operation_instances) estimates[operation].window_instances += n;
    for (const auto& [operation, n] : InstancesOf(process, /*whole_run=*/true)) {
      estimates[operation].run_instances += n;
    }
  }
  for (auto& [operation, estimate] : estimates) {
    if (estimate.window_instances == 0 || estimate.window_ns <= 0) continue;
    estimate.operation = operation;
    const double scale = static_cast<double>(estimate.run_instances) / static_cast<double>(estimate.window_instances);
    estimate.estimated_ns = static_cast<int64_t>(static_cast<double>(estimate.window_ns) * scale);
    for (const auto& [level, ns] : estimate.window_ns_by_level) {
      estimate.estimated_ns_by_level[level] = static_cast<int64_t>(static_cast<double>(ns) * scale);
    }
    report.whole_run_estimate.push_back(estimate);
  }
  std::sort(report.whole_run_estimate.begin(), report.whole_run_estimate.end(),
            [](const RunReport::Estimate& a, const RunReport::Estimate& b) { return a.estimated_ns > b.estimated_ns; });
}

// RunReportAssembly: a RunReport built one process at a time (in start
// order), so that a process's timeline can be freed, or corrected, as
// soon as it has been analysed.
class RunReportAssembly {
 public:
  RunReportAssembly(RunMetadata metadata, std::vector<std::string> problems, NameTable& names, ThreadViews views)
      : names_(names), views_(views) {
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
                                                  process_total, views_, keep_process, measured, primary_thread);
    for (BreakdownRow& row : ToRows(process.pid, process_total, names_)) report_.rows.push_back(std::move(row));
    report_.processes.push_back(std::move(process_report));
    return report_.processes.back();
  }

  RunReport Finish() && {
    for (const Interval& interval : UnionIntervals(std::move(run_gpu_busy_))) {
      report_.gpu_busy_ns += interval.duration_ns();
    }
    report_.steps = StepsOf(report_, kStepOperation);
    SummariseCapture(report_);
    report_.jobs = JobsOf(report_);
    return std::move(report_);
  }

 private:
  RunReport report_;
  NameTable& names_;
  ThreadViews views_;
  IntervalList run_gpu_busy_;  // Every process's busy intervals; their union is the run's.
};

}  // namespace

const std::map<std::string, uint64_t>& InstancesOf(const ProcessReport& process, bool whole_run) {
  return whole_run && process.captured.has_value() ? process.whole_run_instances : process.operation_instances;
}

uint64_t StepsOf(const RunReport& report, const std::string& operation, bool whole_run) {
  uint64_t steps = 0;
  for (const ProcessReport& process : report.processes) {
    const std::map<std::string, uint64_t>& instances = InstancesOf(process, whole_run);
    const auto found = instances.find(operation);
    if (found != instances.end()) steps = std::max(steps, found->second);
  }
  return steps;
}

RunReport BuildRunReport(RunMetadata metadata, std::vector<ProcessTimeline> processes, NameTable& names,
                         std::vector<std::string> problems, bool locate_lines) {
  SortByStart(processes);
  RunReportAssembly assembly(std::move(metadata), std::move(problems), names, ViewsFor(locate_lines));
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
  total.wait_restored_ns += part.wait_restored_ns;
  total.cpu_wait_ns += part.cpu_wait_ns;
  total.python_cpu_wait_ns += part.python_cpu_wait_ns;
  for (const auto& [site, tally] : part.by_site) {
    SiteOverhead& sum = total.by_site[site];
    sum.events += tally.events;
    sum.ns += tally.ns;
    sum.spread_ns += tally.spread_ns;
  }
  for (const auto& [site, count] : part.uncalibrated) total.uncalibrated[site] += count;
  total.python_hook_samples += part.python_hook_samples;
  total.python_hook_sample_ns += part.python_hook_sample_ns;
  // Processes' launch speeds, weighted by their launches.
  for (const auto& [site, speed] : part.cupti_call_speed) {
    CuptiCallSpeed& sum = total.cupti_call_speed[site];
    const auto before = static_cast<double>(sum.calls), added = static_cast<double>(speed.calls);
    if (before + added == 0) continue;
    auto weigh = [&](double a, double b) { return (a * before + b * added) / (before + added); };
    sum.median_call_ns = weigh(sum.median_call_ns, speed.median_call_ns);
    sum.scale = weigh(sum.scale, speed.scale);
    sum.loop_ns = speed.loop_ns;
    sum.calls += speed.calls;
  }
}

}  // namespace

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

CorrectionSource FindCorrection(const std::string& run_dir, const std::string& calibration_path) {
  namespace fs = std::filesystem;
  std::error_code error;
  CorrectionSource source;
  source.file = calibration_path;
  if (source.file.empty() && fs::exists(fs::path(run_dir) / run_layout::kCalibration, error)) {
    source.file = (fs::path(run_dir) / run_layout::kCalibration).string();
  }
  if (source.file.empty()) {
    source.missing = absl::StrFormat(
        "no calibration was found for the machine of this run; %s, then profile again or `rlscope report %s "
        "--calibration FILE`",
        kHowToCalibrate, run_dir);
  } else if (absl::StatusOr<calibration::OverheadModel> loaded = calibration::ReadOverheadModel(source.file);
             !loaded.ok()) {
    source.missing = std::string(loaded.status().message());
  } else {
    source.model = *std::move(loaded);
  }
  return source;
}

RunReport AnalyseRun(DecodedRun run, const AnalysisOptions& options) {
  const calibration::OverheadModel* model = options.model;
  std::string correction_message = options.uncorrected_why.empty() ? "" : "uncorrected: " + options.uncorrected_why;
  // Asked for, but decoded without what it needs (memory_budget.h).
  const bool skipped_for_memory = model != nullptr && !run.kept_for_correction;
  if (skipped_for_memory) {
    correction_message = "uncorrected: " + (run.correction_dropped.empty()
                                                ? std::string("the run was decoded without the correction's data")
                                                : run.correction_dropped);
    model = nullptr;
  }
  RunMetadata metadata = std::move(run.metadata);
  NameTable& names = run.names;
  std::vector<ProcessTimeline> processes = std::move(run.processes);
  SortByStart(processes);
  std::vector<std::string> problems = std::move(run.problems);
  const int64_t wall_ns = metadata.wall_ns;

  const std::vector<std::string> python_versions = PythonVersions(processes);
  if (model != nullptr) {
    if (std::string problem = CorrectionProblem(*model, processes, python_versions); !problem.empty()) {
      correction_message = absl::StrFormat("uncorrected: %s", problem);
      model = nullptr;
    }
  }

  RunReport report;
  if (model == nullptr) {
    report =
        BuildRunReport(std::move(metadata), std::move(processes), names, std::move(problems), options.locate_lines);
    report.correction_message = correction_message;
    report.correction_skipped_for_memory = skipped_for_memory;
  } else {
    // Per process, in start order: the measured analysis (reading the
    // decoded lists in place), then the correction in place and the
    // corrected analysis, then the process is freed. So the report stage
    // holds the decoded run and what the analysis of one thread makes, not
    // two copies of the run.
    // Owners are the measured view's in both: the correction decides them
    // before it moves time (overhead_correction.h), and the corrected
    // analysis takes the measured GPU overlap views and inheritance.
    ProcessCorrection total;
    int64_t root_fixed_ns = 0, root_removed_ns = 0;
    double root_spread_ns = 0;
    // The measured view shows only its rows (and lends its GPU analysis).
    RunReportAssembly uncorrected(metadata, {}, names, ThreadViews::kBreakdown);
    RunReportAssembly corrected(std::move(metadata), std::move(problems), names, ViewsFor(options.locate_lines));
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
        // Priced in CPU time; paid mostly at start-up, where the first
        // thread's first reading of its waits for a CPU stands for it.
        // (Outside the estimate of the threads' costs, and so outside
        // cpu_wait_ns, which is a part of that estimate.)
        root_fixed_ns = static_cast<int64_t>(model->Cost(site).value_or(0) * correction.main_thread_start_scale);
      }
      AddInto(total, correction);
    }
    report = std::move(corrected).Finish();
    RunReport measured = std::move(uncorrected).Finish();
    report.uncorrected_rows = std::move(measured.rows);
    report.gpu_busy_ns = measured.gpu_busy_ns;  // GPU time is not corrected (gpu_analysis.h).
    report.corrected = true;
    report.calibration_file = options.calibration_file;
    report.calibration_quality = model->quality;
    // A windowed run's cost outside its windows was never measured: no
    // estimate of its whole wall time without rlscope is made.
    if (wall_ns > 0 && !report.windowed) {
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
  report.data_damaged = run.data_damaged;
  DescribeLines(report);
  if (run.nvidia_smi) {
    report.nvidia_smi = std::move(run.nvidia_smi);
    for (const std::string& problem : report.nvidia_smi->problems) report.problems.push_back(problem);
  }
  return report;
}

}  // namespace rlscope::report
