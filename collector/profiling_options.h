// ProfilingOptions: the options that say what a profiled run captures
// (--rules, --sim, --backend, --nvtx-domain, --cupti, --no-cupti, the
// capture window's --delay, --duration, --capture-range, --capture-signal), shared by
// every command that profiles (`rlscope run`, `rlscope validate`).
#ifndef RLSCOPE_COLLECTOR_PROFILING_OPTIONS_H_
#define RLSCOPE_COLLECTOR_PROFILING_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/cli_args.h"

namespace rlscope::collector {

// CaptureWindow: which part of the run is captured (rlscope run's capture
// options; preload/capture_gate.h). Without any, all of it.
struct CaptureWindow {
  std::optional<int64_t> delay_ns;     // --delay SECONDS: open this long after the start.
  std::optional<int64_t> duration_ns;  // --duration SECONDS: close for good this long after opening.
  bool api = false;                    // --capture-range api: rlscope.start()/stop() decide.
  bool profiler_api = false;           // --capture-range cudaProfilerApi: cudaProfilerStart()/Stop().
  std::string nvtx_range;              // --capture-range nvtx:NAME: while a range NAME is open.
  int signal = 0;                      // --capture-signal[=SIG]: each one toggles capture.
  // --skip N / --capture M of --capture-op NAME's instances (the operation
  // defaults to simulation once either is given); --every P repeats the
  // window of M every P instances.
  std::string operation;
  std::optional<int64_t> skip, count, every;
  bool by_instances() const { return skip || count || every; }
  bool any() const {
    return delay_ns || duration_ns || api || profiler_api || !nvtx_range.empty() || signal != 0 || by_instances();
  }
};

struct ProfilingOptions {
  std::vector<std::string> rule_files;              // --rules, absolute paths (the default rules come on top).
  std::vector<std::string> simulator_patterns;      // --sim LIB:PATTERN
  std::vector<std::string> backend_patterns;        // --backend LIB:PATTERN
  std::vector<std::string> communication_patterns;  // --comm LIB:PATTERN
  std::vector<std::string> nvtx_domains;            // --nvtx-domain GLOB
  bool cupti = true;                                // --no-cupti turns it off
  std::string cupti_path;                           // --cupti PATH, absolute
  // --calibration FILE, absolute: the overhead calibration to correct the
  // report with (default: this machine's, from `rlscope calibrate`).
  std::string calibration_path;
  // --keep-free SIZE: stop writing the trace when its filesystem has less
  // free (0: never stop); default: DefaultKeepFree of the filesystem.
  std::optional<uint64_t> keep_free_bytes;
  CaptureWindow capture;
  // --uncompressed-trace: trace files as plain frames, the format before
  // compressed blocks (for tools that read the stream directly).
  bool uncompressed_trace = false;
};

// TakeProfilingOption: when `option` is one of the profiling options, takes
// its value (if any) from `cursor`, checks it, stores it in `options` and
// returns true; returns false for any other option (the caller's own or an
// unknown one). A bad value is a usage error of `command` ("run", ...).
absl::StatusOr<bool> TakeProfilingOption(const std::string& command, const ParsedOption& option, ArgCursor& cursor,
                                         ProfilingOptions& options);

// DescribeCaptureWindow: the capture options as a user would type them
// ("--delay 60 --duration 5", "--capture-range api"); "" for none. Kept in
// meta.json, so a report whose window never opened can say what was asked.
std::string DescribeCaptureWindow(const CaptureWindow& window);

// kProfilingOptionsHelp: the help lines of those options, as `--help`
// texts list them (two leading spaces, descriptions from column 24).
extern const char kProfilingOptionsHelp[];
// kCaptureOptionsHelp: the capture window's options (`rlscope run` only).
extern const char kCaptureOptionsHelp[];

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_PROFILING_OPTIONS_H_
