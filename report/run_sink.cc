#include "report/run_sink.h"

#include <algorithm>
#include <utility>

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

}  // namespace rlscope::report
