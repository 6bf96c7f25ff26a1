// Launcher: starts the profiled command with the preload injected and turns
// its end into an exit code the way a shell does.
#ifndef RLSCOPE_COLLECTOR_LAUNCHER_H_
#define RLSCOPE_COLLECTOR_LAUNCHER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rlscope::collector {

// InjectionEnvironment: the variables that make a process (and all its
// descendants, which inherit them) stream to the collector.
struct InjectionEnvironment {
  std::string preload_path;             // librlscope_preload.so
  std::string socket_path;              // the collector's socket
  std::string python_dir;               // holds sitecustomize.py and the rlscope module
  std::vector<std::string> rule_files;  // RLSCOPE_RULES_COUNT, RLSCOPE_RULES_<i> (rule_file.h)
  std::string simulator_patterns;       // ','-separated LIB:PATTERN (RLSCOPE_SIM)
  std::string backend_patterns;         // ','-separated LIB:PATTERN (RLSCOPE_BACKEND)
  std::string communication_patterns;   // ','-separated LIB:PATTERN (RLSCOPE_COMM)
  std::string nvtx_domains;             // ','-separated globs (RLSCOPE_NVTX_DOMAINS)
  // GPU level: CUDA_INJECTION64_PATH names the preload, so the CUDA driver
  // starts CUPTI capture in it; `cupti_path` (RLSCOPE_CUPTI_PATH) picks the
  // CUPTI library when not empty.
  bool cupti = true;
  std::string cupti_path;
  // RLSCOPE_QUIET=1: the preload leaves out its notices (what the report
  // says too); its problem lines still print (preload/raw_log.h).
  bool quiet = false;
  // The capture window (preload/capture_gate.h), RLSCOPE_CAPTURE_*: open
  // and close times in CLOCK_MONOTONIC ns (-1: none), whether
  // rlscope.start()/stop() decide, the signal that toggles it (0: none).
  // Unset ones are removed, so an outer run's cannot leak in.
  int64_t capture_open_ns = -1;
  int64_t capture_close_ns = -1;
  bool capture_api = false;
  bool capture_profiler_api = false;
  std::string capture_range;  // An NVTX range name.
  int capture_signal = 0;
  // Instances that place the window: the operation ("" none), how many
  // to skip, how many to capture (-1: unbounded), and the period of a
  // repeated window (0: one window).
  std::string capture_operation;
  int64_t capture_skip = 0;
  int64_t capture_count = -1;
  int64_t capture_every = 0;
};

// BuildChildEnvironment: `base` (NAME=VALUE entries) with LD_PRELOAD and
// PYTHONPATH prepended, RLSCOPE_SOCKET/RLSCOPE_RULES_*/RLSCOPE_SIM set and
// NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH pointed at the preload
// (unless the user set them: then theirs win and `warnings` says which
// level rlscope will not capture), and RLSCOPE_QUIET=1 with `quiet` (an
// inherited RLSCOPE_QUIET is removed otherwise).
std::vector<std::string> BuildChildEnvironment(const std::vector<std::string>& base,
                                               const InjectionEnvironment& injection,
                                               std::vector<std::string>* warnings);

// ChildStdio: descriptors the command gets as its stdin, stdout and stderr;
// -1 keeps rlscope's own. The caller owns them (close-on-exec is fine).
struct ChildStdio {
  int in = -1;
  int out = -1;
  int err = -1;
};

// Launch: fork/execvp `argv` with `environment` and the signal mask and
// dispositions rlscope inherited (RememberInheritedSignalMask),
// as the leader of a new process group (so a signal rlscope forwards
// reaches it once, not also through rlscope's own group). With a
// `terminal_fd` (>= 0), that group becomes the terminal's foreground group,
// as a shell would make it: Ctrl-C and Ctrl-Z go to the command directly.
// `stdio` redirects the command's standard descriptors.
// Fails with a one-line message naming the command when it cannot be
// executed (the child never runs then): NotFound when there is no such
// command ("command not found" for a name looked up in PATH) or its #!
// interpreter is missing, PermissionDenied when it exists but cannot be
// executed (no execute permission, a directory, not an executable
// format), Internal for rlscope's own failures (fork, pipe, redirection).
absl::StatusOr<pid_t> Launch(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                             int terminal_fd, const ChildStdio& stdio = {});

// ControllingTerminal: stdin's fd when it is a terminal whose foreground
// group is ours (an interactive run), else -1.
int ControllingTerminal();

// GiveTerminalTo: makes `process_group` the terminal's foreground group.
// The caller must have SIGTTOU blocked (it may be in the background).
void GiveTerminalTo(int terminal_fd, pid_t process_group);

// RememberInheritedSignalMask: saves the signal mask rlscope was started
// with, before anything blocks signals, for Launch() to give the command
// (as a shell would have). main() calls it first; without it the command
// gets an empty mask.
void RememberInheritedSignalMask();

// IgnoreFileSizeSignal: makes rlscope ignore SIGXFSZ, so that writing past
// a file size limit (ulimit -f) fails with EFBIG, an error it reports,
// instead of killing it. Launch() gives the command the disposition
// rlscope inherited.
void IgnoreFileSizeSignal();

// ExitCodeOfLaunchFailure: the exit status a shell gives for a command
// Launch() could not start: 127 (NotFound), 126 (PermissionDenied), else 1.
int ExitCodeOfLaunchFailure(const absl::Status& status);

// ExitCodeOf: a wait status as a shell reports it: the exit status, or
// 128 + N when killed by signal N.
int ExitCodeOf(int wait_status);

// CurrentEnvironment: this process's environment as NAME=VALUE entries.
std::vector<std::string> CurrentEnvironment();

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_LAUNCHER_H_
