// `rlscope report DIR`: (re)analyse a run directory and print its report.
#ifndef RLSCOPE_COLLECTOR_REPORT_COMMAND_H_
#define RLSCOPE_COLLECTOR_REPORT_COMMAND_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "report/run_report.h"

namespace rlscope::report {
class RunDecoding;  // run_decoding.h
}  // namespace rlscope::report

namespace rlscope::collector {

struct ReportOutcome {
  absl::Status status;        // Not OK: some report file could not be written (or none).
  std::string text;           // report.txt's content.
  bool data_damaged = false;  // Some trace data was unreadable (prefix used).
  // The analysis itself (absent when the run could not be analysed).
  std::optional<report::RunReport> report;
};

// WriteReport: analyses DIR and writes DIR/report.json, DIR/report.txt and
// DIR/report.html. `calibration_path`: correct with this calibration
// instead of the run's own. `started`: the decoding begun during the run
// (ProfileOutcome::decoding), or null.
ReportOutcome WriteReport(const std::string& run_dir, const std::string& calibration_path = "",
                          report::RunDecoding* started = nullptr);

// ReportCommandMain: `args` are the arguments after "report".
int ReportCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_REPORT_COMMAND_H_
