#include "report/run_loader.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "absl/strings/str_format.h"
#include "format/run_layout.h"
#include "format/trace_reader.h"
#include "report/job_directory.h"
#include "report/memory_budget.h"
#include "report/report_vocabulary.h"
#include "report/run_decoding.h"

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

// ListRunTraces: `held_heap`, the heap a decoding begun during the run
// holds (RoomForAnalysis).
absl::StatusOr<RunTraces> ListRunTraces(const std::string& run_dir, uint64_t held_heap) {
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
  absl::StatusOr<std::optional<uint64_t>> available = RoomForAnalysis(held_heap);
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

}  // namespace

absl::StatusOr<DecodedRun> LoadRun(const std::string& run_dir, const LoadRequest& request) {
  // What a decoding begun during the run holds is in use already, and
  // counts as available to the analysis it is part of.
  RunDecoding* started = request.started != nullptr && request.started->following() ? request.started : nullptr;
  absl::StatusOr<RunTraces> traces = ListRunTraces(run_dir, started != nullptr ? started->HeldBytes() : 0);
  if (!traces.ok()) {
    if (started != nullptr) started->Abandon();
    return traces.status();
  }
  // A corrected analysis needs about 2.5 times the memory of an
  // uncorrected one: where only that fits, the correction's data is not kept.
  std::string correction_dropped;
  switch (PlanReport(traces->need, traces->available, request.for_correction)) {
    case ReportPlan::kTooLarge:
      if (started != nullptr) started->Abandon();
      return TooLarge(run_dir, *traces);
    case ReportPlan::kUncorrectedOnly: correction_dropped = CorrectionTooLarge(run_dir, *traces); break;
    case ReportPlan::kAsAsked: break;
  }
  const bool for_correction = request.for_correction && correction_dropped.empty();
  std::optional<DecodedRun> decoded;
  // A decoding begun during the run serves if it kept what is needed now;
  // else it is let go before the run is decoded afresh.
  if (started != nullptr && started->for_correction() == for_correction) {
    decoded = started->Finish(traces->files);
  } else if (started != nullptr) {
    started->Abandon();
  }
  if (!decoded) decoded = RunDecoding(run_dir, for_correction).Finish(traces->files);
  DecodedRun run = *std::move(decoded);
  run.correction_dropped = std::move(correction_dropped);
  return run;
}

}  // namespace rlscope::report
