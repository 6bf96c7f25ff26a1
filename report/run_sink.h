// RunSink: one consumer of a decoded run: a report file, an export, a
// diff's side. Every sink of one command is fed from the same DecodedRun
// (run_loader.h), decoded once: first the timelines as measured, to the
// sinks that read them (the Chrome and Perfetto traces), then the analysed
// report, made once, to the sinks that read that (text, JSON, HTML, CSV,
// folded stacks, diffs). The same shape as one parser feeding many
// consumers (heaptrack's analysis, py-spy's recorders): a sink never
// reads the run's files itself, so a streaming analysis can feed it.
#ifndef RLSCOPE_REPORT_RUN_SINK_H_
#define RLSCOPE_REPORT_RUN_SINK_H_

#include <optional>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "report/decoded_run.h"
#include "report/run_report.h"

namespace rlscope::report {

class RunDecoding;  // run_decoding.h

class RunSink {
 public:
  virtual ~RunSink() = default;
  // Timelines: the decoded run as measured, before any analysis.
  virtual void Timelines(const DecodedRun& run) { (void)run; }
  // WantsReport: whether Report is to be called (the analysis runs only
  // if some sink wants it).
  virtual bool WantsReport() const { return true; }
  // Report: the analysed run.
  virtual void Report(const RunReport& report) { (void)report; }
};

// FeedSinks: `run` to every sink, in their order: all their Timelines
// first, then, if any wants it, one AnalyseRun (which consumes `run`) and
// all their Reports. Returns the report when it was made.
std::optional<RunReport> FeedSinks(DecodedRun run, const AnalysisOptions& options, std::span<RunSink* const> sinks);

// FedRun: what feeding a run directory gave: the report (when a sink
// wanted one) and whether some of its trace data was damaged.
struct FedRun {
  std::optional<RunReport> report;
  bool data_damaged = false;
};

// FeedRunDirectory: the run in `run_dir` to `sinks`, the one way every
// command reads a run: its calibration (FindCorrection with
// `calibration_path`, looked for only when some sink wants the report),
// one LoadRun, then FeedSinks. `locate_lines`: the report also has each
// process's located_rows (folded stacks).
// `started`: a decoding of the run begun while it ran (LoadRequest's).
absl::StatusOr<FedRun> FeedRunDirectory(const std::string& run_dir, const std::string& calibration_path,
                                        std::span<RunSink* const> sinks, bool locate_lines = false,
                                        RunDecoding* started = nullptr);

// LoadRunReport: the report of the run in `run_dir` alone (no sink),
// corrected with `calibration_path` (empty: the run's own calibration, if
// any).
absl::StatusOr<RunReport> LoadRunReport(const std::string& run_dir, const std::string& calibration_path = "",
                                        bool locate_lines = false);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_SINK_H_
