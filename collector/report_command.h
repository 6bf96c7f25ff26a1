// `rlscope report DIR`: (re)analyse a run directory and print its report.
#ifndef RLSCOPE_COLLECTOR_REPORT_COMMAND_H_
#define RLSCOPE_COLLECTOR_REPORT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rlscope::report {
struct RunReport;
}  // namespace rlscope::report

namespace rlscope::collector {

struct ReportOutcome {
  absl::Status status;        // Not OK: no report could be written.
  std::string text;           // report.txt's content.
  bool data_damaged = false;  // Some trace data was unreadable (prefix used).
};

// WriteReport: analyses DIR and writes DIR/report.json and DIR/report.txt;
// with `analysed`, also hands back the analysis itself.
// `calibration_path`: correct with this calibration instead of the run's own.
ReportOutcome WriteReport(const std::string& run_dir, report::RunReport* analysed = nullptr,
                          const std::string& calibration_path = "");

// ReportCommandMain: `args` are the arguments after "report".
int ReportCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_REPORT_COMMAND_H_
