// LoadRun: the one reader of a run directory. It reads DIR/meta.json,
// DIR/rules/, every DIR/trace/*.rlt and DIR/nvidia-smi.csv, and decodes them
// into a DecodedRun; nothing else in the report side opens a run's files.
//
// Memory: decoding holds every event (memory_budget.h). Before it starts,
// the traces' size is weighed against the memory available: a run that
// would not fit even uncorrected is refused (the trace kept); one whose
// correction would not fit is decoded without what the correction needs,
// and says so (DecodedRun::correction_dropped).
#ifndef RLSCOPE_REPORT_RUN_LOADER_H_
#define RLSCOPE_REPORT_RUN_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "report/decoded_run.h"

namespace rlscope::report {

class RunDecoding;

struct LoadRequest {
  // Also keep what the overhead correction needs (the overhead sites and
  // windows, as many as the events), memory permitting.
  bool for_correction = false;
  // A decoding of this run begun while it ran (run_decoding.h), or null:
  // finished and used when it kept what this request needs (and followed
  // the run to its end), else the run is decoded afresh.
  RunDecoding* started = nullptr;
};

// LoadRun: fails when DIR is not a run directory or too large to analyse
// here; damaged trace files are decoded up to the damage and listed in
// `problems`.
absl::StatusOr<DecodedRun> LoadRun(const std::string& run_dir, const LoadRequest& request = {});

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_LOADER_H_
