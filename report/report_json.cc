#include "report/report_json.h"

#include "calibration/calibration_verdict.h"
#include "nlohmann/json.hpp"
#include "report/headline.h"
#include "report/python_hook_check.h"

namespace rlscope::report {

namespace {

nlohmann::ordered_json RowJson(const BreakdownRow& row, bool with_process) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  if (with_process) json["process"] = row.pid;
  json["operation"] = row.operation;
  json["resource"] = ResourceName(row.resource);
  json["category"] = CategoryName(row.category);
  json["ns"] = row.ns;
  return json;
}

nlohmann::ordered_json ThreadJson(const ThreadReport& thread) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const BreakdownRow& row : thread.rows) rows.push_back(RowJson(row, false));
  return {{"tid", thread.tid},
          {"name", thread.name},
          {"begin_ns", thread.begin_ns},
          {"end_ns", thread.end_ns},
          {"events", thread.events},
          {"dropped_events", thread.dropped_events},
          {"cuda_api_calls", thread.cuda_api_calls},
          {"counted", thread.active_time_only ? "active" : "lifetime"},
          {"rows", rows}};
}

nlohmann::ordered_json GpuJson(const GpuAnalysis& gpu) {
  nlohmann::ordered_json by_launch = nlohmann::ordered_json::array();
  for (const GpuLaunchRow& row : gpu.by_launch) {
    by_launch.push_back(
        {{"operation", row.operation}, {"category", CategoryName(row.category)}, {"count", row.count}, {"ns", row.ns}});
  }
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const GpuKernelRow& row : gpu.kernels_by_launch) {
    kernels.push_back({{"operation", row.operation}, {"kernel", row.kernel}, {"count", row.count}, {"ns", row.ns}});
  }
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (const GpuLineRow& row : gpu.lines) {
    lines.push_back({{"operation", row.operation},
                     {"code", row.location},
                     {"line", row.line},
                     {"activities", row.activities},
                     {"ns", row.ns}});
  }
  nlohmann::ordered_json operations = nlohmann::ordered_json::array();
  for (const OperationGpuRow& row : gpu.operations) {
    operations.push_back({{"operation", row.operation},
                          {"wall_ns", row.wall_ns},
                          {"gpu_busy_ns", row.gpu_busy_ns},
                          {"gpu_busy_fraction", row.gpu_busy_fraction},
                          {"kernels", row.kernels},
                          {"kernel_ns", row.kernel_ns}});
  }
  nlohmann::ordered_json apis = nlohmann::ordered_json::array();
  for (const ApiGpuRow& row : gpu.apis) {
    apis.push_back({{"api", row.api},
                    {"calls", row.calls},
                    {"kernels", row.kernels},
                    {"memcpys", row.memcpys},
                    {"memsets", row.memsets}});
  }
  return {{"status", gpu.status},
          {"message", gpu.message},
          {"devices", gpu.devices},
          {"kernels", gpu.kernels},
          {"memcpys", gpu.memcpys},
          {"memsets", gpu.memsets},
          {"kernel_ns", gpu.kernel_ns},
          {"memcpy_ns", gpu.memcpy_ns},
          {"memset_ns", gpu.memset_ns},
          {"busy_ns", gpu.busy_ns},
          {"launch_calls", gpu.launch_calls},
          {"unattributed", gpu.unattributed},
          {"began_before_launch", gpu.before_launch},
          {"dropped", gpu.dropped},
          {"cupti_overhead_ns", gpu.cupti_overhead_ns},
          {"operations", operations},
          {"apis", apis},
          {"by_launch", by_launch},
          {"kernels_by_launch", kernels},
          {"lines", lines}};
}

// CollectivesJson: the process's collectives (collective_calls.h) on the
// measured clock, compact ([begin_ns, end_ns, index in "operations"] each,
// and a fourth element, true, for a queued one: a rank may issue hundreds
// of thousands), so `rlscope merge` can line up the ranks of several
// nodes' runs without their traces.
nlohmann::ordered_json CollectivesJson(const ProcessReport& process) {
  nlohmann::ordered_json calls = nlohmann::ordered_json::array();
  for (const CollectiveCall& call : process.collectives) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::array({call.begin_ns, call.end_ns, call.operation});
    if (call.queued) entry.push_back(true);
    calls.push_back(std::move(entry));
  }
  return {{"operations", process.collective_operations}, {"calls", std::move(calls)}};
}

nlohmann::ordered_json ProcessJson(const ProcessReport& process) {
  nlohmann::ordered_json threads = nlohmann::ordered_json::array();
  for (const ThreadReport& thread : process.threads) threads.push_back(ThreadJson(thread));
  nlohmann::ordered_json transitions = nlohmann::ordered_json::array();
  for (const TransitionRow& row : process.transitions) {
    transitions.push_back({{"operation", row.operation},
                           {"from", CategoryName(row.from)},
                           {"to", CategoryName(row.to)},
                           {"count", row.count},
                           {"operation_instances", row.operation_instances}});
  }
  // python_lines: the user's own lines behind the native calls (else the
  // calling line); python_library_lines: the calling lines themselves.
  auto line_rows = [](const std::vector<LineRow>& rows) {
    nlohmann::ordered_json lines = nlohmann::ordered_json::array();
    for (const LineRow& row : rows) {
      lines.push_back({{"operation", row.operation},
                       {"code", row.location},
                       {"line", row.line},
                       {"function", row.function},
                       {"file", row.file},
                       {"source", row.source},
                       {"user_code", row.user_code},
                       {"ns", row.ns},
                       {"calls", row.calls},
                       {"outer_ns", row.outer_ns}});
    }
    return lines;
  };
  nlohmann::ordered_json lines = line_rows(process.python_lines);
  // instance_stats: per operation with instances, how long one took in it
  // (instance_durations.h); largest total first.
  nlohmann::ordered_json instance_stats = nlohmann::ordered_json::array();
  for (const InstanceStats& stats : process.instance_stats) {
    instance_stats.push_back({{"operation", stats.operation},
                              {"instances", stats.instances},
                              {"total_ns", stats.total_ns},
                              {"mean_ns", stats.mean_ns},
                              {"p50_ns", stats.p50_ns},
                              {"p95_ns", stats.p95_ns},
                              {"max_ns", stats.max_ns}});
  }
  // unmatched: the time in no operation and the functions it was spent
  // under, each with a rule line naming it (unmatched_functions.h).
  const UnmatchedTime& explained = process.unmatched;
  nlohmann::ordered_json unmatched_functions = nlohmann::ordered_json::array();
  for (const UnmatchedFunction& function : explained.functions) {
    unmatched_functions.push_back({{"function", function.function},
                                   {"file", function.file},
                                   {"user_code", function.user_code},
                                   {"ns", function.ns},
                                   {"calls", function.calls},
                                   {"rule", function.rule}});
  }
  nlohmann::ordered_json unmatched = {{"none_ns", explained.none_ns}, {"functions", unmatched_functions}};
  return {{"pid", process.pid},
          {"ppid", process.ppid},
          {"forked_from", process.forked_from},
          {"executable", process.executable},
          {"argv", process.argv},
          {"launcher_rank", process.rank.launcher.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json({{"launcher", process.rank.launcher},
                                                          {"rank", process.rank.rank},
                                                          {"world_size", process.rank.world_size},
                                                          {"local_rank", process.rank.local_rank}})},
          {"begin_ns", process.begin_ns},
          {"end_ns", process.end_ns},
          // CLOCK_REALTIME at begin_ns (null: not known): with begin_ns, how
          // this host's clock relates to another's (rlscope merge).
          {"begin_unix_ns", process.begin_unix_ns > 0 ? nlohmann::ordered_json(process.begin_unix_ns) : nullptr},
          {"traced_thread_ns", process.traced_thread_ns},
          // Blocked thread time (category "Wait" in the threads' rows), in
          // no operation's rows: run_report.h.
          {"wait_ns", process.wait_ns},
          {"ended_cleanly", process.ended_cleanly},
          {"events", process.events},
          {"dropped_events", process.dropped_events},
          {"problems", process.problems},
          {"threads", threads},
          {"instance_stats", instance_stats},
          {"transitions", transitions},
          {"python_lines", lines},
          {"python_library_lines", line_rows(process.library_lines)},
          {"unmatched", unmatched},
          {"gpu", GpuJson(process.gpu)},
          {"collectives", CollectivesJson(process)}};
}

// PerStepJson: the environment steps (StepsOf) and the time per step: of
// the training loop's thread time (every operation but start-up and
// teardown, as the headline's loop) and of the wall time; nulls without
// steps.
nlohmann::ordered_json PerStepJson(const RunReport& report) {
  const int64_t loop_ns = LoopThreadNs(report);
  nlohmann::ordered_json json = {{"operation", kStepOperation}, {"steps", report.steps}};
  const bool any = report.steps > 0;
  const auto steps = static_cast<double>(report.steps);
  // A windowed run's steps are the windows': so is the wall time.
  const int64_t wall_ns =
      report.windowed ? report.captured_ns : report.corrected_wall_ns.value_or(report.metadata.wall_ns);
  json["loop_ns_per_step"] = any ? nlohmann::ordered_json(std::llround(static_cast<double>(loop_ns) / steps)) : nullptr;
  json["wall_ns_per_step"] = any ? nlohmann::ordered_json(std::llround(static_cast<double>(wall_ns) / steps)) : nullptr;
  return json;
}

// CaptureJson: the capture windows (capture_windows.h): "windowed" false
// when the whole run was captured; else the windows as [begin, end] in ns
// from the earliest process start, their total, and the environment steps
// of the whole run.
nlohmann::ordered_json CaptureJson(const RunReport& report) {
  nlohmann::ordered_json json = {{"windowed", report.windowed}};
  if (!report.windowed) return json;
  int64_t origin = INT64_MAX;
  for (const ProcessReport& process : report.processes) origin = std::min(origin, process.begin_ns);
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  for (const Interval& window : report.capture_windows) {
    windows.push_back({window.begin_ns - origin, window.end_ns - origin});
  }
  json["windows_ns"] = std::move(windows);
  json["captured_ns"] = report.captured_ns;
  json["whole_run_steps"] = report.whole_run_steps;
  nlohmann::ordered_json estimates = nlohmann::ordered_json::array();
  for (const RunReport::Estimate& estimate : report.whole_run_estimate) {
    nlohmann::ordered_json levels = nlohmann::ordered_json::array();
    for (const auto& [level, ns] : estimate.estimated_ns_by_level) {
      levels.push_back({{"level", std::string(CategoryName(level))},
                        {"window_ns", estimate.window_ns_by_level.at(level)},
                        {"estimated_ns", ns}});
    }
    estimates.push_back({{"operation", estimate.operation},
                         {"window_instances", estimate.window_instances},
                         {"run_instances", estimate.run_instances},
                         {"window_ns", estimate.window_ns},
                         {"estimated_ns", estimate.estimated_ns},
                         {"by_level", std::move(levels)}});
  }
  json["whole_run_estimate"] = std::move(estimates);
  return json;
}

// HeadlineJson: the answer the report leads with (headline.h).
nlohmann::ordered_json HeadlineJson(const Headline& headline) {
  return {{"findings", headline.findings}, {"next_steps", headline.next_steps}, {"correction", headline.correction}};
}

}  // namespace

// JobsJson: the ranks of distributed jobs, side by side (job_ranks.h).
nlohmann::ordered_json JobsJson(const RunReport& report) {
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const JobReport& job : report.jobs) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (const JobReport::Rank& rank : job.ranks) {
      nlohmann::ordered_json entry = {{"rank", rank.rank}, {"pid", rank.pid}};
      if (!rank.node.empty()) entry["node"] = rank.node;  // Merged runs of several nodes only.
      ranks.push_back(std::move(entry));
    }
    nlohmann::ordered_json operations = nlohmann::ordered_json::array();
    for (const JobReport::Operation& operation : job.operations) {
      operations.push_back({{"operation", operation.operation},
                            {"total_ns", operation.total_ns},
                            {"per_rank_ns", operation.per_rank_ns},
                            {"slowest_rank", job.ranks[operation.slowest].rank},
                            {"slowest_over_mean", operation.slowest_over_mean},
                            {"per_rank_wait_ns", operation.per_rank_wait_ns}});
    }
    const JobReport::Communication& talk = job.communication;
    nlohmann::ordered_json communication = {{"per_rank_ns", talk.per_rank_ns},
                                            {"lined_up", talk.lined_up},
                                            {"collectives", talk.collectives},
                                            {"per_rank_wait_ns", talk.per_rank_wait_ns},
                                            {"per_rank_last", talk.per_rank_last}};
    if (!talk.not_lined_up.empty()) communication["not_lined_up"] = talk.not_lined_up;
    jobs.push_back({{"launcher", job.launcher},
                    {"parent_pid", job.parent_pid},
                    {"world_size", job.world_size},
                    {"command", job.command},
                    {"ranks", std::move(ranks)},
                    {"operations", std::move(operations)},
                    {"communication", std::move(communication)}});
  }
  return jobs;
}

std::string FormatReportJson(const RunReport& report) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const BreakdownRow& row : report.rows) rows.push_back(RowJson(row, true));
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const ProcessReport& process : report.processes) processes.push_back(ProcessJson(process));
  nlohmann::ordered_json json = {
      {"schema", kReportSchema},
      {"command", report.metadata.command},
      {"exit_code", report.metadata.recorded ? nlohmann::ordered_json(report.metadata.exit_code) : nullptr},
      {"wall_ns", report.metadata.wall_ns},
      {"corrected", report.corrected},
      {"headline", HeadlineJson(MakeHeadline(report))},
      {"rows", rows},
      {"processes", processes},
      {"problems", report.problems},
      {"rlscope_version", report.metadata.rlscope_version},
      {"gpu_busy_ns", report.gpu_busy_ns},
      {"per_step", PerStepJson(report)},
      {"capture", CaptureJson(report)},
      {"jobs", JobsJson(report)},
  };
  // Overhead correction: rows above are the corrected ones
  // when "corrected" is true; uncorrected_rows are what was measured.
  nlohmann::ordered_json correction = {{"calibration_file", report.calibration_file},
                                       {"message", report.correction_message}};
  if (report.corrected) {
    nlohmann::ordered_json uncorrected = nlohmann::ordered_json::array();
    for (const BreakdownRow& row : report.uncorrected_rows) uncorrected.push_back(RowJson(row, true));
    json["uncorrected_rows"] = std::move(uncorrected);
    if (report.corrected_wall_ns.has_value()) {
      json["corrected_wall_ns"] = *report.corrected_wall_ns;
      json["corrected_wall_spread_ns"] = report.corrected_wall_spread_ns;
    }
    nlohmann::ordered_json sites = nlohmann::ordered_json::object();
    for (const auto& [site, tally] : report.overhead.by_site) {
      sites[site] = {{"events", tally.events},
                     {"ns", static_cast<int64_t>(tally.ns)},
                     {"spread_ns", static_cast<int64_t>(tally.spread_ns)}};
    }
    correction["estimated_ns"] = static_cast<int64_t>(report.overhead.estimated_ns);
    correction["removed_ns"] = static_cast<int64_t>(report.overhead.removed_ns);
    correction["unplaced_ns"] = static_cast<int64_t>(report.overhead.unplaced_ns);
    correction["wait_restored_ns"] = static_cast<int64_t>(report.overhead.wait_restored_ns);
    correction["cpu_wait_ns"] = static_cast<int64_t>(report.overhead.cpu_wait_ns);
    correction["main_thread_removed_ns"] = report.overhead.main_thread_removed_ns;
    correction["sites"] = std::move(sites);
    correction["uncalibrated"] = report.overhead.uncalibrated;
    // The Python hook timed in the run against its price (null: too few
    // callbacks timed).
    nlohmann::ordered_json hook;
    if (const auto check = CheckPythonHook(report.overhead)) {
      hook = {{"timed_callbacks", check->timed_callbacks},
              {"callbacks", check->callbacks},
              {"per_callback_ns", check->per_callback_ns},
              {"hook_ns", static_cast<int64_t>(check->hook_ns)},
              {"priced_ns", static_cast<int64_t>(check->priced_ns)},
              {"under_priced_ns", static_cast<int64_t>(check->under_priced_ns())},
              {"floor_removed_ns", static_cast<int64_t>(check->floor_removed_ns)}};
    }
    correction["python_hook"] = std::move(hook);
    // CUPTI's launch prices at the run's launch speed (cupti_call_speed.h):
    // by calibrated site, launches weighted over processes.
    nlohmann::ordered_json speeds = nlohmann::ordered_json::object();
    for (const auto& [site, speed] : report.overhead.cupti_call_speed) {
      speeds[site] = {{"launches", speed.calls},
                      {"median_launch_ns", speed.median_call_ns},
                      {"calibrated_loop_ns", speed.loop_ns},
                      {"scale", speed.scale}};
    }
    correction["cupti_launch_speed"] = std::move(speeds);
    // The calibration's verdict, so no reader takes an accepted-uncertain
    // correction for a trusted one ("unrecorded": an older file).
    const calibration::CalibrationQuality& quality = report.calibration_quality;
    nlohmann::ordered_json judged = {{"verdict", quality.verdict.empty() ? "unrecorded" : quality.verdict},
                                     {"reasons", quality.reasons},
                                     {"warnings", quality.warnings},
                                     {"remeasured", quality.remeasured},
                                     {"summary", calibration::DescribeQuality(quality)}};
    judged["contention"] =
        quality.contention ? calibration::ContentionJson(*quality.contention) : nlohmann::ordered_json();
    correction["calibration_quality"] = std::move(judged);
  }
  json["correction"] = std::move(correction);
  if (report.nvidia_smi.has_value()) {
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (const GpuUtilizationSummary& gpu : report.nvidia_smi->gpus) {
      gpus.push_back({{"index", gpu.gpu_index},
                      {"samples", gpu.samples},
                      {"mean_utilization_percent", gpu.mean_percent},
                      {"max_utilization_percent", gpu.max_percent}});
    }
    json["nvidia_smi"] = {{"gpus", gpus}, {"problems", report.nvidia_smi->problems}};
  }
  // ordered_json keeps "schema" first for people reading the file; readers
  // must look fields up by key, not by position.
  // Names come from programs and the kernel (thread names cut at 15 bytes):
  // invalid UTF-8 is replaced, never a reason to fail.
  return json.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace rlscope::report
