#include "collector/export_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "report/export_chrome.h"
#include "report/export_csv.h"
#include "report/export_folded.h"
#include "report/export_job.h"
#include "report/export_perfetto.h"
#include "report/export_sqlite.h"
#include "report/job_directory.h"
#include "report/run_report.h"
#include "report/run_sink.h"

namespace rlscope::collector {

namespace {

constexpr const char* kExportUsage = R"USAGE(usage: rlscope export DIR [--chrome FILE] [--perfetto FILE] [--csv FILE]
                      [--folded FILE] [--sqlite FILE] [--calibration FILE]

Write the run in DIR (made by 'rlscope run --out DIR') in formats other
tools read. At least one of:

  --chrome FILE   Chrome trace event JSON ({"traceEvents": [...]}), for
                  chrome://tracing or ui.perfetto.dev: per process (pid) its
                  threads (tid) with their operations (cat "operation") and
                  CPU category intervals (cat: "CUDA API", "Backend",
                  "Simulator", "Communication", "Python", "Profiler",
                  "Wait"; a Python->native call carries its Python
                  location), a track per GPU stream ("GPU D stream S")
                  with its kernels, copies and memsets,
                  and flow arrows from each launching CUDA call to its GPU
                  activity. Times as measured (not corrected), ts/dur in
                  microseconds from the earliest process start.
  --perfetto FILE Perfetto protobuf trace (TrackEvent), for ui.perfetto.dev
                  ("Open trace file") or trace_processor: a track per
                  process and per thread (its operations), beside each
                  thread "NAME TID CPU categories" (and "NAME TID inferred
                  operations"), a track per GPU stream ("GPU D stream S")
                  with kernels, copies and memsets, and flows from each
                  launching CUDA call to its GPU work. Times as measured,
                  in trace-clock nanoseconds.
  --csv FILE      the report's breakdown rows as CSV (RFC 4180):
                  view,process,operation,resource,category,ns where view is
                  "corrected" or "uncorrected" (both views when the report is
                  corrected; sum only the rows of one view).
  --folded FILE   folded stacks for flame graphs (flamegraph.pl, speedscope):
                  "PROCESS;OPERATION;CATEGORY;qualname (file:LINE) NS" per
                  line, the last frame the Python line whose native call
                  the time was in (left out where no line is known); the
                  count is nanoseconds of thread time (CPU and CPU+GPU rows,
                  corrected when the report is); GPU device time is left out.
  --sqlite FILE   an SQLite database of the timelines and the report: tables
                  processes, threads, operation_intervals,
                  operation_instances, category_intervals, python_calls
                  (with the user's own line behind each), cuda_api_calls,
                  gpu_activities (with the launching call and its
                  operation), strings (names by id), report_rows (the
                  breakdown, both views as in --csv), report_lines (the
                  report's top Python lines), report_instances (how long
                  one instance of each operation took) and meta (command,
                  wall time, corrected wall time, calibration quality,
                  environment steps).
                  Trace times as measured, in trace-clock nanoseconds;
                  example queries: share/rlscope/sqlite/ where rlscope is
                  installed (scripts/sqlite/ in its source).
                  Written to FILE.tmp, then renamed over FILE; not to "-".

A merged job's directory ('rlscope merge DIR... --out JOB') holds its
nodes' reports, not their traces, and exports two formats:
  --chrome FILE   the job on the first node's clock: a process per (node,
                  pid), named with its node, pid and rank, with a slice
                  over its traced life and a "collectives" track of its
                  collectives (named by the operation they were issued in),
                  so that the ranks' waits line up across nodes
  --csv FILE      every node's rows: view,node,process,operation,resource,
                  category,ns (process: the pid on that node)
For the rest, export each node's run directory where it is.

FILE "-" writes to stdout (for one format only). Existing files are
overwritten. --csv, --folded and --sqlite's report tables use the same
analysis as 'rlscope report' (corrected with the run's calibration, or with
--calibration FILE).

options:
  --calibration FILE  correct --csv, --folded and --sqlite's report tables
                      with this calibration instead
  -h, --help          show this help

exit status: 0 written; 3 written but some trace data was damaged (only
what could be read is exported); 1 DIR could not be read or a FILE could
not be written; 2 usage error.
)USAGE";

int Usage(const std::string& message) {
  std::cerr << UsageError("export", message).message() << "\n";
  return 2;
}

// An output: a file opened for writing, or stdout.
struct Output {
  std::string path;
  std::unique_ptr<std::ofstream> file;
  std::ostream& stream() { return file ? *file : std::cout; }
};

bool Open(Output& output) {
  if (output.path == "-") return true;
  output.file = std::make_unique<std::ofstream>(output.path, std::ios::binary | std::ios::trunc);
  return static_cast<bool>(*output.file);
}

bool Close(Output& output) {
  if (!output.file) {
    std::cout.flush();
    return static_cast<bool>(std::cout);
  }
  output.file->close();
  return static_cast<bool>(*output.file);
}

// FormatSink: one format written to one output: the Chrome and Perfetto
// traces from the timelines as measured, CSV and folded stacks from the
// report.
class FormatSink : public report::RunSink {
 public:
  FormatSink(std::string format, Output output) : format_(std::move(format)), output_(std::move(output)) {}

  bool WantsReport() const override { return format_ == "csv" || format_ == "folded"; }
  void Timelines(const report::DecodedRun& run) override {
    if (format_ == "chrome") report::WriteChromeTrace(run.processes, run.names, output_.stream());
    if (format_ == "perfetto") report::WritePerfettoTrace(run.processes, run.names, output_.stream());
  }
  void Report(const report::RunReport& report) override {
    if (format_ == "csv") report::WriteRowsCsv(report, output_.stream());
    if (format_ == "folded") report::WriteFoldedStacks(report, output_.stream());
  }
  Output& output() { return output_; }

 private:
  std::string format_;
  Output output_;
};

// ExportJob: a merged job's --chrome and --csv (report/export_job.h).
int ExportJob(const std::string& job_dir, const std::string& chrome, const std::string& csv) {
  absl::StatusOr<report::MergedJob> job = report::LoadJobDirectory(job_dir);
  if (!job.ok()) {
    std::cerr << "rlscope export: " << job.status().message() << "\n";
    return 1;
  }
  for (const auto& [path, write] :
       {std::pair{chrome, &report::WriteJobChromeTrace}, std::pair{csv, &report::WriteJobCsv}}) {
    if (path.empty()) continue;
    Output output{path, nullptr};
    bool written = Open(output);
    if (written) {
      write(*job, output.stream());
      written = Close(output);
    }
    if (!written) {
      std::cerr << "rlscope export: cannot write " << path << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int ExportCommandMain(const std::vector<std::string>& args) {
  ArgCursor cursor(args);
  std::string chrome, perfetto, csv, folded, sqlite, calibration_path;
  std::vector<std::string> positional;
  while (cursor.NextOption(positional)) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      std::cout << kExportUsage;
      return 0;
    }
    std::string* target = nullptr;
    if (option.name == "--chrome") {
      target = &chrome;
    } else if (option.name == "--csv") {
      target = &csv;
    } else if (option.name == "--folded") {
      target = &folded;
    } else if (option.name == "--calibration") {
      target = &calibration_path;
    } else if (option.name == "--perfetto") {
      target = &perfetto;
    } else if (option.name == "--sqlite") {
      target = &sqlite;
    } else {
      return Usage(absl::StrFormat("unknown option '%s'", option.name));
    }
    absl::StatusOr<std::string> value = cursor.TakeValue(option);
    if (!value.ok()) return Usage(std::string(value.status().message()));
    if (value->empty()) return Usage(absl::StrFormat("%s needs a non-empty value", option.name));
    *target = *value;
  }
  if (positional.size() != 1) {
    return Usage(positional.empty() ? "no run directory given" : "give exactly one run directory");
  }
  if (chrome.empty() && perfetto.empty() && csv.empty() && folded.empty() && sqlite.empty()) {
    return Usage(
        "nothing to export: give --chrome FILE, --perfetto FILE, --csv FILE, --folded FILE and/or --sqlite FILE");
  }
  // A database is a file SQLite seeks in, never a stream.
  if (sqlite == "-") return Usage("--sqlite needs a file, not \"-\"");
  if ((chrome == "-") + (perfetto == "-") + (csv == "-") + (folded == "-") > 1) {
    return Usage("only one format can go to stdout (\"-\")");
  }
  const std::string& run_dir = positional[0];
  if (report::IsJobDirectory(run_dir)) {
    if (!perfetto.empty() || !folded.empty() || !sqlite.empty() || !calibration_path.empty()) {
      return Usage(absl::StrFormat(
          "%s is a merged job, which holds its nodes' reports, not their traces: export it with --chrome and --csv; "
          "--perfetto, --folded, --sqlite and --calibration need a run's trace ('rlscope export NODE_DIR ...' on "
          "each node)",
          run_dir));
    }
    return ExportJob(run_dir, chrome, csv);
  }

  // Open every output first: an unwritable one fails before the analysis.
  std::vector<std::unique_ptr<FormatSink>> sinks;
  for (const auto& [format, path] :
       {std::pair{"chrome", chrome}, {"perfetto", perfetto}, {"csv", csv}, {"folded", folded}}) {
    if (path.empty()) continue;
    Output output{path, nullptr};
    if (!Open(output)) {
      std::cerr << "rlscope export: cannot write " << path << "\n";
      return 1;
    }
    sinks.push_back(std::make_unique<FormatSink>(format, std::move(output)));
  }
  std::unique_ptr<report::SqliteExport> database;
  if (!sqlite.empty()) {
    absl::StatusOr<std::unique_ptr<report::SqliteExport>> opened = report::SqliteExport::Open(sqlite);
    if (!opened.ok()) {
      std::cerr << "rlscope export: " << opened.status().message() << "\n";
      return 1;
    }
    database = *std::move(opened);
  }

  // One decoding for every format; the calibration only matters to the
  // report's (--csv, --folded).
  std::vector<report::RunSink*> feed;
  for (const auto& sink : sinks) feed.push_back(sink.get());
  if (database) feed.push_back(database.get());
  absl::StatusOr<report::FedRun> fed =
      report::FeedRunDirectory(run_dir, calibration_path, feed, /*locate_lines=*/!folded.empty());
  if (!fed.ok()) {
    std::cerr << "rlscope export: " << fed.status().message() << "\n";
    return 1;
  }
  // Asked-for correction that did not happen: the rows are measured ones.
  if (fed->report && fed->report->correction_skipped_for_memory) {
    std::cerr << "rlscope export: " << fed->report->correction_message << "\n";
  }
  for (const auto& sink : sinks) {
    if (!Close(sink->output())) {
      std::cerr << "rlscope export: cannot write " << sink->output().path << "\n";
      return 1;
    }
  }
  if (database) {
    if (absl::Status finished = database->Finish(); !finished.ok()) {
      std::cerr << "rlscope export: " << finished.message() << "\n";
      return 1;
    }
  }
  if (fed->data_damaged) {
    std::cerr << "rlscope export: some trace data was damaged; only what could be read was exported "
                 "('rlscope report DIR' lists the problems)\n";
    return 3;
  }
  return 0;
}

}  // namespace rlscope::collector
