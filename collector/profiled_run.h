// Profiled and unprofiled runs of a command: what `rlscope run` does
// between making the run directory and writing the report, as a function
// that other commands (`rlscope validate`, `rlscope calibrate`) call too.
//
// Both kinds of run start the command the same way (its own process group,
// the signal mask rlscope inherited, the same environment apart from
// rlscope's injection) and time it the same way: CLOCK_MONOTONIC read
// immediately before Launch() and again when the command is reaped.
//
// Signals (both kinds): SIGINT, SIGTERM, SIGHUP and SIGQUIT that reach
// rlscope while the command runs are passed on to the command's process
// group once each (and recorded in `interrupted_by`); the caller's signal
// mask is restored before returning. With `give_terminal` (what `run` does)
// the command's group is the terminal's foreground group, so Ctrl-C and
// Ctrl-Z go to it directly and rlscope stops (Ctrl-Z) with it. Without it
// the terminal stays with rlscope's group: Ctrl-C reaches rlscope, which
// passes it on (so the caller learns that the user interrupted), and
// Ctrl-Z (SIGTSTP) is passed on too; when the command stops, rlscope stops
// with it, and continues it when continued itself. A command in a
// background group must not read the terminal: give it `stdin_path`
// (e.g. /dev/null).
#ifndef RLSCOPE_COLLECTOR_PROFILED_RUN_H_
#define RLSCOPE_COLLECTOR_PROFILED_RUN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/profiling_options.h"

namespace rlscope::report {
class RunDecoding;  // run_decoding.h
}  // namespace rlscope::report

namespace rlscope::collector {

struct ProfileRequest {
  std::vector<std::string> command;
  std::string run_dir;                  // Exists, empty but for trace/ (PrepareRunDirectory made it).
  std::vector<std::string> rule_files;  // Absolute paths; used after the installation's default rules.
  std::vector<std::string> simulator_patterns, backend_patterns, communication_patterns, nvtx_domains;
  bool cupti = true;
  std::string cupti_path;
  // The overhead calibration: this machine's (empty `calibration_path`) or
  // the named file, copied into DIR for the report; none with
  // `apply_calibration` false (calibrate's own runs).
  std::string calibration_path;
  bool apply_calibration = true;
  // Print why the report will be uncorrected (once per command, not run).
  bool say_calibration_problem = true;
  bool sample_nvidia_smi = true;  // Only with `cupti`, as `rlscope run` does.
  bool give_terminal = true;      // See the top of this file.
  // Draw a live status line on stderr while the command runs (the caller
  // decides: stderr a terminal, not TERM=dumb, not --quiet). It is erased
  // when the command exits, before anything else is printed.
  bool status_line = false;
  // The preload leaves out its notices, which the report carries too
  // (--quiet; RLSCOPE_QUIET in InjectionEnvironment).
  bool quiet_preload = false;
  // Stop writing the trace when its filesystem would have less free
  // (--keep-free; 0: never); default: DefaultKeepFree(run_dir).
  std::optional<uint64_t> keep_free_bytes;
  CaptureWindow capture;
  bool uncompressed_trace = false;  // Receiver::WriteUncompressed
  // Decode the traces while the command runs (collector/live_decoding.h,
  // which also decides whether this machine has the CPUs for it), for the
  // report written next: `rlscope run` and `validate` ask.
  bool decode_during_run = false;
  std::vector<std::string> extra_environment;  // "NAME=VALUE", set (replacing) in the child's environment.
  // The command's standard descriptors: a file path (stdout/stderr files are
  // created or truncated), or empty to inherit rlscope's.
  std::string stdin_path;
  std::string stdout_path;
  std::string stderr_path;
  // Warnings and non-fatal problems are printed to stderr as
  // "<log_prefix>: warning: ..." / "<log_prefix>: ...".
  std::string log_prefix = "rlscope run";
};

// DefaultKeepFree: what --keep-free defaults to for a run directory: the
// smaller of 1 GiB and 5 % of its filesystem (0 when unknown), so a long
// run leaves the disk room for what the command itself writes.
uint64_t DefaultKeepFree(const std::string& dir);

// SetProfilingOptions: copies the options parsed from the command line
// into `request`'s fields of the same names.
void SetProfilingOptions(const ProfilingOptions& options, ProfileRequest& request);

struct ProfileOutcome {
  int exit_code = 0;    // As a shell reports it: the exit status, or 128+N for death by signal N.
  int64_t wall_ns = 0;  // Launch to reap (the same as meta.json's wall_ns).
  // The first of SIGINT, SIGTERM, SIGHUP, SIGQUIT that rlscope received
  // (and passed on) while the command ran; 0 when none.
  int interrupted_by = 0;
  // Why the run's report will not be corrected ("" when it will).
  std::string calibration_problem;
  // The traces' decoding, begun during the run (ProfileRequest::
  // decode_during_run), for WriteReport; null when there is none.
  std::shared_ptr<report::RunDecoding> decoding;
};

// ProfileCommand: runs request.command with the preload injected, waits for
// it and its processes' streams, and writes DIR/trace/, DIR/meta.json and
// DIR/rules/ (not the report: WriteReport(DIR) does that). Errors: Launch()'s
// NotFound or PermissionDenied when the command cannot be executed (a
// shell's 127 or 126: ExitCodeOfLaunchFailure; the message says why); any
// other code when rlscope could not set the run up (nothing was started).
absl::StatusOr<ProfileOutcome> ProfileCommand(const ProfileRequest& request);

// RunUnprofiled: runs `command` plainly (rlscope's own environment plus
// `extra_environment`, nothing injected), started, timed and signalled
// exactly as ProfileCommand does. The three-argument form inherits stderr
// and stdin and gives the command the terminal.
struct UnprofiledRequest {
  std::vector<std::string> command;
  std::vector<std::string> extra_environment;
  bool give_terminal = true;
  std::string stdin_path, stdout_path, stderr_path;  // As in ProfileRequest.
};
absl::StatusOr<ProfileOutcome> RunUnprofiled(const UnprofiledRequest& request);
absl::StatusOr<ProfileOutcome> RunUnprofiled(const std::vector<std::string>& command,
                                             const std::vector<std::string>& extra_environment,
                                             const std::string& stdout_path);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_PROFILED_RUN_H_
