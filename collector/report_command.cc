#include "collector/report_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "collector/file_output.h"
#include "collector/merge_command.h"
#include "collector/report_room.h"
#include "format/run_layout.h"
#include "report/job_directory.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "report/run_report.h"
#include "report/run_sink.h"

namespace rlscope::collector {

namespace {

constexpr const char* kReportUsage = R"USAGE(usage: rlscope report [--quiet] [--calibration FILE] DIR

Analyse the run in DIR (made by 'rlscope run --out DIR') again: rewrite
DIR/report.json, DIR/report.txt and DIR/report.html (the same report as one
self-contained page with charts, for a browser) from DIR/trace/*.rlt and
DIR/meta.json, and print the report to stdout.

What the report counts: per operation, the threads' work, by level of the
stack. A thread blocked in a call rlscope recognises (lock or Condition
acquire, queue get, Event.wait, time.sleep, select/poll/epoll, socket
receive/accept, os.read of a pipe, waitpid/subprocess wait) is not working:
that time is category "Wait" in the thread's rows (report.json
processes[].threads[].rows; the Threads table of report.html) and the
process's wait_ns ("Wait:" under its table in report.txt), and in no
operation's time, total or share. Waits shorter than a few microseconds
(an uncontended lock) stay the level they ran in.

A damaged trace file (truncated or corrupt, e.g. after a crash) is analysed
up to the damage; the report names the file and byte offset.

The report is corrected for rlscope's own overhead with the calibration
the run was made with (DIR/calibration.json, copied there by `rlscope run`
from `rlscope calibrate`'s file for the machine); without one it is
uncorrected and says so.

Memory: the analysis holds every decoded event, about 3 bytes of memory
per byte of trace uncorrected and 7 corrected (estimated before it starts,
against the memory available to this process, cgroup limits included).
A corrected report that would not fit is made uncorrected, and says why;
one that would not fit even so is refused (exit 1), the trace kept.
RLSCOPE_REPORT_MEMORY=SIZE (e.g. 16G) sets the memory to plan with;
RLSCOPE_REPORT_MEMORY=unlimited skips the check.

A merged job's directory ('rlscope merge DIR... --out JOB') is shown
again: the job is merged anew from the nodes' reports kept in
JOB/nodes/N/report.json (or the nodes' own directories, for a job merged
before copies were kept), JOB/job.json and JOB/job.txt are rewritten and
the job is printed. Each node's report was corrected where it was
analysed, so --calibration does not apply to a job: run 'rlscope report
NODE_DIR --calibration FILE' on the node and merge again.

options:
  --quiet             do not print the report
  --calibration FILE  correct with this calibration instead (e.g. one made
                      after the run, on the machine the run was made on)
  -h, --help          show this help

exit status: 0 report written; 3 report written but some trace data was
damaged; 1 DIR could not be analysed; 2 usage error.
)USAGE";

}  // namespace

namespace {

// ReportFile: one of DIR's report files, replaced as a whole (file_output.h).
class ReportFile : public report::RunSink {
 public:
  using Format = std::string (*)(const report::RunReport&);
  ReportFile(std::filesystem::path path, Format format, std::string* text = nullptr)
      : path_(std::move(path)), format_(format), text_(text) {}

  void Report(const report::RunReport& report) override {
    std::string content = format_(report);
    status_ = ReplaceRunFile(path_, content);
    if (text_ != nullptr) *text_ = std::move(content);
  }
  const absl::Status& status() const { return status_; }

 private:
  std::filesystem::path path_;
  Format format_;
  std::string* text_;
  absl::Status status_ = absl::InternalError("not written");
};

std::string ReportJson(const report::RunReport& report) { return report::FormatReportJson(report); }
std::string ReportText(const report::RunReport& report) { return report::FormatReportText(report); }
std::string ReportHtml(const report::RunReport& report) { return report::FormatReportHtml(report); }

// ReportJob: a merged job's directory shown again (job_directory.h).
int ReportJob(const std::string& job_dir, const std::string& calibration_path, bool quiet) {
  if (!calibration_path.empty()) {
    std::cerr << UsageError("report", absl::StrFormat("%s is a merged job: its nodes' reports were corrected where "
                                                      "they were analysed; run 'rlscope report NODE_DIR --calibration "
                                                      "%s' on each node and merge again",
                                                      job_dir, calibration_path))
                     .message()
              << "\n";
    return 2;
  }
  absl::StatusOr<report::MergedJob> job = report::LoadJobDirectory(job_dir);
  if (!job.ok()) {
    std::cerr << "rlscope report: " << job.status().message() << "\n";
    return 1;
  }
  const std::string text = report::FormatJobText(*job);
  if (const absl::Status written = WriteJobFiles(job_dir, *job, text); !written.ok()) {
    std::cerr << "rlscope report: " << written.message() << "\n";
    return 1;
  }
  if (!quiet) std::cout << text;
  return 0;
}

}  // namespace

ReportOutcome WriteReport(const std::string& run_dir, const std::string& calibration_path,
                          report::RunDecoding* started) {
  ReportOutcome outcome;
  // The room a killed collector left behind (report_room.h) takes space
  // these files need.
  StaleReportRoomRemoved(run_dir);
  const std::filesystem::path dir(run_dir);
  ReportFile json(dir / run_layout::kReportJson, &ReportJson);
  ReportFile text(dir / run_layout::kReportText, &ReportText, &outcome.text);
  ReportFile html(dir / run_layout::kReportHtml, &ReportHtml);
  report::RunSink* const files[] = {&json, &text, &html};
  absl::StatusOr<report::FedRun> fed =
      report::FeedRunDirectory(run_dir, calibration_path, files, /*locate_lines=*/false, started);
  if (!fed.ok()) {
    outcome.status = fed.status();
    return outcome;
  }
  outcome.data_damaged = fed->data_damaged;
  outcome.report = std::move(fed->report);
  for (const ReportFile* file : {&json, &text, &html}) {
    if (outcome.status.ok()) outcome.status = file->status();
  }
  return outcome;
}

int ReportCommandMain(const std::vector<std::string>& args) {
  ArgCursor cursor(args);
  bool quiet = false;
  std::string calibration_path;
  while (cursor.AtOption()) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      std::cout << kReportUsage;
      return 0;
    } else if (option.name == "--quiet" || option.name == "-q") {
      quiet = true;
    } else if (option.name == "--calibration") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) {
        std::cerr << UsageError("report", std::string(value.status().message())).message() << "\n";
        return 2;
      }
      calibration_path = *value;
    } else {
      std::cerr << UsageError("report", absl::StrFormat("unknown option '%s'", option.name)).message() << "\n";
      return 2;
    }
  }
  if (cursor.AtSeparator()) cursor.Take();
  const std::vector<std::string> rest = cursor.TakeRest();
  if (rest.size() != 1) {
    std::cerr
        << UsageError("report", rest.empty() ? "no run directory given" : "give exactly one run directory").message()
        << "\n";
    return 2;
  }
  if (report::IsJobDirectory(rest[0])) return ReportJob(rest[0], calibration_path, quiet);
  ReportOutcome outcome = WriteReport(rest[0], calibration_path);
  if (!outcome.status.ok()) {
    std::cerr << "rlscope report: " << outcome.status.message() << "\n";
    return 1;
  }
  if (!quiet) std::cout << outcome.text;
  if (outcome.data_damaged) {
    std::cerr << "rlscope report: some trace data was damaged; the report covers what could be read "
                 "(see the problems listed above)\n";
    return 3;
  }
  return 0;
}

}  // namespace rlscope::collector
