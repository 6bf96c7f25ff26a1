// DecodedRun: everything a run directory holds, read and decoded once
// (run_loader.h), before any analysis. Every consumer of a run starts from
// one: the analysis that makes the report (run_report.h), the exporters
// that need the timelines themselves (export_chrome.h, export_perfetto.h),
// and through the analysis every report, export and diff (run_sink.h).
#ifndef RLSCOPE_REPORT_DECODED_RUN_H_
#define RLSCOPE_REPORT_DECODED_RUN_H_

#include <optional>
#include <string>
#include <vector>

#include "report/gpu_utilization.h"
#include "report/process_timeline.h"
#include "report/run_metadata.h"

namespace rlscope::report {

struct DecodedRun {
  std::string run_dir;
  RunMetadata metadata;
  NameTable names;  // Labels of every timeline in `processes`.
  // One entry per process (exec chains merged), ordered by pid; as
  // measured (not corrected for rlscope's overhead).
  std::vector<ProcessTimeline> processes;
  // Problems with the run's data as a whole (meta.json, rule files,
  // damaged trace files, lost children, ...), and whether some trace data
  // was damaged.
  std::vector<std::string> problems;
  bool data_damaged = false;
  // What nvidia-smi claimed while the run lasted (absent when it was not
  // sampled); its own problems are in its `problems`.
  std::optional<GpuUtilization> nvidia_smi;
  // Whether the timelines hold what the overhead correction needs
  // (LoadRequest::for_correction); when asked for but not kept,
  // `correction_dropped` says why (too little memory).
  bool kept_for_correction = false;
  std::string correction_dropped;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_DECODED_RUN_H_
