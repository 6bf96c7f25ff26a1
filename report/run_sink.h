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

#include "report/decoded_run.h"
#include "report/run_report.h"

namespace rlscope::report {

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

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_SINK_H_
