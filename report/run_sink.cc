#include "report/run_sink.h"

#include <algorithm>
#include <utility>

#include "report/run_loader.h"

namespace rlscope::report {

std::optional<RunReport> FeedSinks(DecodedRun run, const AnalysisOptions& options, std::span<RunSink* const> sinks) {
  for (RunSink* sink : sinks) sink->Timelines(run);
  if (std::none_of(sinks.begin(), sinks.end(), [](const RunSink* sink) { return sink->WantsReport(); })) {
    return std::nullopt;
  }
  RunReport report = AnalyseRun(std::move(run), options);
  for (RunSink* sink : sinks) {
    if (sink->WantsReport()) sink->Report(report);
  }
  return report;
}

absl::StatusOr<FedRun> FeedRunDirectory(const std::string& run_dir, const std::string& calibration_path,
                                        std::span<RunSink* const> sinks, bool locate_lines, RunDecoding* started) {
  const bool wants_report =
      std::any_of(sinks.begin(), sinks.end(), [](const RunSink* sink) { return sink->WantsReport(); });
  CorrectionSource correction;
  if (wants_report) correction = FindCorrection(run_dir, calibration_path);
  absl::StatusOr<DecodedRun> run =
      LoadRun(run_dir, {.for_correction = correction.model.has_value(), .started = started});
  if (!run.ok()) return run.status();
  FedRun fed;
  fed.data_damaged = run->data_damaged;
  fed.report = FeedSinks(*std::move(run), correction.Options(locate_lines), sinks);
  return fed;
}

absl::StatusOr<RunReport> LoadRunReport(const std::string& run_dir, const std::string& calibration_path,
                                        bool locate_lines) {
  RunSink report_only;  // Wants the report, writes nothing.
  RunSink* const sinks[] = {&report_only};
  absl::StatusOr<FedRun> fed = FeedRunDirectory(run_dir, calibration_path, sinks, locate_lines);
  if (!fed.ok()) return fed.status();
  return *std::move(fed->report);
}

}  // namespace rlscope::report
