// RunMetadata: what `rlscope run` knows about the run beyond the traces
// (the command, how it ended, how long it took), stored as DIR/meta.json so
// `rlscope report DIR` can rebuild the same report later.
#ifndef RLSCOPE_REPORT_RUN_METADATA_H_
#define RLSCOPE_REPORT_RUN_METADATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rlscope::report {

struct RunMetadata {
  std::vector<std::string> command;
  int exit_code = 0;
  int64_t wall_ns = 0;        // From launching the command to its exit.
  int64_t start_unix_ns = 0;  // Wall-clock start, for display.
  std::string rlscope_version;
  // Problems the collector saw while receiving (also shown in the report).
  std::vector<std::string> collector_problems;
  // How the GPU level was set up: "cupti" (CUDA_INJECTION64_PATH pointed
  // at the preload), "off" (rlscope run --no-cupti), "preempted" (the user's
  // environment already named another CUDA injection library), "" (a run
  // from before GPU capture existed).
  std::string gpu_capture;
  // Where the command was started (its working directory): the report
  // shows the user's files relative to it and reads their lines from it.
  // "" for runs from before it was recorded.
  std::string working_directory;
  // The capture window asked for, as typed ("--delay 60"; "" for the whole
  // run), and its --delay (0: none), so that a report whose window never
  // opened says what was asked and whether the run ended first.
  std::string capture_request;
  int64_t capture_delay_ns = 0;
  // The trace's stream bytes decoded while the command ran (collector/
  // live_decoding.h) and held when it ended; 0: none.
  int64_t trace_decoded_during_run_bytes = 0;
  // False when meta.json could not be read: the fields above are then
  // defaults, not facts, and reports say "unknown" instead of "exit status 0".
  bool recorded = true;
};

absl::Status WriteRunMetadata(const std::string& path, const RunMetadata& metadata);
absl::StatusOr<RunMetadata> ReadRunMetadata(const std::string& path);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_METADATA_H_
