#include "export_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_format.h"
#include "cli_args.h"
#include "export_chrome.h"
#include "export_csv.h"
#include "export_folded.h"
#include "export_perfetto.h"
#include "run_report.h"

namespace rlscope::collector {

namespace {

constexpr const char* kExportUsage = R"USAGE(usage: rlscope export DIR [--chrome FILE] [--perfetto FILE] [--csv FILE]
                      [--folded FILE] [--calibration FILE]

Write the run in DIR (made by 'rlscope run --out DIR') in formats other
tools read. At least one of:

  --chrome FILE   Chrome trace event JSON ({"traceEvents": [...]}), for
                  chrome://tracing or ui.perfetto.dev: per process (pid) its
                  threads (tid) with their operations (cat "operation") and
                  CPU category intervals (cat: "CUDA API", "Backend",
                  "Simulator", "Python", "Profiler", "Wait"; a
                  Python->native call carries its Python location), a
                  track per GPU stream ("GPU D stream S") with its
                  kernels, copies and memsets,
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

FILE "-" writes to stdout (for one format only). Existing files are
overwritten. --csv and --folded use the same analysis as 'rlscope report'
(corrected with the run's calibration, or with --calibration FILE).

options:
  --calibration FILE  correct --csv/--folded with this calibration instead
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

}  // namespace

int ExportCommandMain(const std::vector<std::string>& args) {
  ArgCursor cursor(args);
  std::string chrome, perfetto, csv, folded, calibration_path;
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
  if (chrome.empty() && perfetto.empty() && csv.empty() && folded.empty()) {
    return Usage("nothing to export: give --chrome FILE, --perfetto FILE, --csv FILE and/or --folded FILE");
  }
  if ((chrome == "-") + (perfetto == "-") + (csv == "-") + (folded == "-") > 1) {
    return Usage("only one format can go to stdout (\"-\")");
  }
  const std::string& run_dir = positional[0];

  // Open every output first: an unwritable one fails before the analysis.
  std::vector<std::pair<std::string, Output>> outputs;  // (format, output)
  for (const auto& [format, path] :
       {std::pair{"chrome", chrome}, {"perfetto", perfetto}, {"csv", csv}, {"folded", folded}}) {
    if (path.empty()) continue;
    Output output{path, nullptr};
    if (!Open(output)) {
      std::cerr << "rlscope export: cannot write " << path << "\n";
      return 1;
    }
    outputs.emplace_back(format, std::move(output));
  }

  bool damaged = false;
  std::optional<report::RunReport> run_report;
  if (!csv.empty() || !folded.empty()) {
    absl::StatusOr<report::RunReport> loaded =
        report::LoadRunReport(run_dir, calibration_path, /*locate_lines=*/!folded.empty());
    if (!loaded.ok()) {
      std::cerr << "rlscope export: " << loaded.status().message() << "\n";
      return 1;
    }
    damaged = loaded->data_damaged;
    // Asked-for correction that did not happen: the rows are measured ones.
    if (loaded->correction_skipped_for_memory) std::cerr << "rlscope export: " << loaded->correction_message << "\n";
    run_report = *std::move(loaded);
  }
  std::optional<report::DecodedRun> decoded;
  if (!chrome.empty() || !perfetto.empty()) {
    // The timelines themselves, decoded again: the report's analysis
    // consumes its copy.
    absl::StatusOr<report::DecodedRun> loaded = report::LoadRunTimelines(run_dir);
    if (!loaded.ok()) {
      std::cerr << "rlscope export: " << loaded.status().message() << "\n";
      return 1;
    }
    damaged = damaged || loaded->data_damaged;
    decoded = *std::move(loaded);
  }
  for (auto& [format, output] : outputs) {
    if (format == std::string("chrome")) {
      report::WriteChromeTrace(decoded->processes, decoded->names, output.stream());
    } else if (format == std::string("perfetto")) {
      report::WritePerfettoTrace(decoded->processes, decoded->names, output.stream());
    } else if (format == std::string("csv")) {
      report::WriteRowsCsv(*run_report, output.stream());
    } else {
      report::WriteFoldedStacks(*run_report, output.stream());
    }
    if (!Close(output)) {
      std::cerr << "rlscope export: cannot write " << output.path << "\n";
      return 1;
    }
  }
  if (damaged) {
    std::cerr << "rlscope export: some trace data was damaged; only what could be read was exported "
                 "('rlscope report DIR' lists the problems)\n";
    return 3;
  }
  return 0;
}

}  // namespace rlscope::collector
