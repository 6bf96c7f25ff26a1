#include "report/run_decoding.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "format/run_layout.h"
#include "report/capture_windows.h"
#include "report/launcher_processes.h"
#include "report/lost_processes.h"
#include "report/memory_budget.h"

namespace rlscope::report {

namespace {

namespace fs = std::filesystem;

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

// The rules the run used (copied into DIR/rules/ by `rlscope run`).
RuleSet LoadRunRules(const std::string& run_dir, std::vector<std::string>& problems) {
  RuleSet rules;
  std::error_code error;
  std::vector<fs::path> rule_files;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(run_dir) / run_layout::kRulesDir, error)) {
    if (entry.path().extension() == ".rules") rule_files.push_back(entry.path());
  }
  std::sort(rule_files.begin(), rule_files.end());
  for (const fs::path& file : rule_files) {
    std::string rules_error;
    if (!LoadRuleFile(file.string(), rules, &rules_error)) problems.push_back(rules_error);
  }
  return rules;
}

}  // namespace

RunDecoding::Trace::Trace(const fs::path& path, RunDecoding& run)
    : builder(run.run_.names, run.classifier_.get(), &run.symbolizer_, &run.rules_.operations),
      follower(path.string(), [this](const wire::Frame& frame, uint64_t) { builder.AddFrame(frame); }) {
  builder.CollectOverhead(run.for_correction_);
}

RunDecoding::RunDecoding(std::string run_dir, bool for_correction)
    : run_dir_(std::move(run_dir)), for_correction_(for_correction) {
  run_.run_dir = run_dir_;
  run_.kept_for_correction = for_correction_;
  rules_ = LoadRunRules(run_dir_, rule_problems_);
  classifier_ = std::make_unique<LibraryClassifier>(rules_.libraries);
  run_.names.Intern("(none)");
  heap_at_start_ = HeapInUse();
}

RunDecoding::Trace& RunDecoding::TraceOf(const fs::path& path) {
  std::unique_ptr<Trace>& trace = traces_[path];
  if (trace == nullptr) trace = std::make_unique<Trace>(path, *this);
  return *trace;
}

bool RunDecoding::Follow() {
  if (stopped_) return false;
  std::error_code error;
  uint64_t stream_bytes = 0;
  // Iterated with error codes: nothing here may throw into the thread
  // that follows a run (collector/live_decoding.h).
  fs::directory_iterator entry(fs::path(run_dir_) / run_layout::kTraceDir, error);
  for (; !error && entry != fs::directory_iterator(); entry.increment(error)) {
    if (entry->path().extension() != run_layout::kTraceExtension) continue;
    Trace& trace = TraceOf(entry->path());
    trace.follower.ReadNew();
    stream_bytes += trace.follower.stream_bytes();
  }
  followed_stream_bytes_ = stream_bytes;
  // The whole analysis must fit in what is available now (the program's
  // memory grows too) with what the decoding holds already; past that,
  // or with a budget that does not parse, it lets go and the end of the
  // run decides (LoadRun).
  absl::StatusOr<std::optional<uint64_t>> room = RoomForAnalysis(HeldBytes());
  if (!room.ok() || PlanReport(EstimateReportMemory(stream_bytes), *room, for_correction_) != ReportPlan::kAsAsked) {
    Abandon();
  }
  return !stopped_;
}

uint64_t RunDecoding::HeldBytes() const {
  const uint64_t now = HeapInUse();
  return now > heap_at_start_ ? now - heap_at_start_ : 0;
}

void RunDecoding::Abandon() {
  traces_.clear();
  stopped_ = true;
}

std::optional<DecodedRun> RunDecoding::Finish(const std::vector<fs::path>& files) {
  if (stopped_) return std::nullopt;
  stopped_ = true;
  std::vector<std::string>& problems = run_.problems;
  absl::StatusOr<RunMetadata> loaded = ReadRunMetadata((fs::path(run_dir_) / run_layout::kMeta).string());
  if (loaded.ok()) {
    run_.metadata = *std::move(loaded);
  } else {
    run_.metadata.recorded = false;
    problems.push_back(absl::StrFormat("%s; command, exit code and wall time are unknown", loaded.status().message()));
  }
  for (const std::string& problem : run_.metadata.collector_problems) problems.push_back(problem);
  for (std::string& problem : rule_problems_) problems.push_back(std::move(problem));

  std::vector<ProcessTimeline> processes;
  for (const fs::path& file : files) {
    // Each file's decoding is let go once finished: as when files were
    // decoded one by one, one builder's working state is held at a time.
    TraceOf(file);  // A file no Follow saw is decoded here, whole.
    const std::unique_ptr<Trace> trace = std::move(traces_.extract(file).mapped());
    absl::StatusOr<collector::TraceReadResult> read = trace->follower.Finish();
    if (!read.ok()) {
      problems.push_back(std::string(read.status().message()));
      run_.data_damaged = true;
      continue;
    }
    ProcessTimeline process = trace->builder.Finish();
    if (read->damage) {
      run_.data_damaged = true;
      problems.push_back(*read->damage);
      process.problems.push_back(*read->damage);
    }
    processes.push_back(std::move(process));
  }
  traces_.clear();
  if (files.empty()) problems.push_back("no trace files: no process reported to the collector");
  run_.processes = MergeExecChains(std::move(processes));
  MarkLaunchers(run_.processes, run_.names);
  for (ProcessTimeline& process : run_.processes) ApplyCaptureWindows(process);
  for (std::string& problem : LostChildProblems(run_.processes)) problems.push_back(std::move(problem));

  std::error_code error;
  const fs::path nvidia_smi_csv = fs::path(run_dir_) / run_layout::kNvidiaSmiCsv;
  const int64_t start_unix_ns = run_.metadata.start_unix_ns;
  if (fs::exists(nvidia_smi_csv, error) && start_unix_ns > 0) {
    run_.nvidia_smi =
        SummarizeGpuUtilization(nvidia_smi_csv.string(), (fs::path(run_dir_) / run_layout::kNvidiaSmiStderr).string(),
                                start_unix_ns, start_unix_ns + run_.metadata.wall_ns);
  }
  return std::move(run_);
}

}  // namespace rlscope::report
