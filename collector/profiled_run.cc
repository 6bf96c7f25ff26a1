#include "collector/profiled_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration/calibration_store.h"
#include "calibration/machine_fingerprint.h"
#include "calibration/overhead_model.h"
#include "collector/gpu_utilization_sampler.h"
#include "collector/launcher.h"
#include "collector/live_decoding.h"
#include "collector/receiver.h"
#include "collector/report_room.h"
#include "collector/run_directory.h"
#include "collector/terminal_status.h"
#include "format/run_layout.h"
#include "report/gpu_utilization.h"
#include "report/run_metadata.h"
#include "report/run_report.h"

namespace rlscope::collector {

namespace {

// After COMMAND exits, its descendants may still be flushing; wait this
// long for their streams to close before reporting without them.
constexpr int64_t kDrainTimeoutNs = 5'000'000'000;

int64_t NowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

bool IsInterruption(int signal_number) {
  return signal_number == SIGINT || signal_number == SIGTERM || signal_number == SIGHUP || signal_number == SIGQUIT;
}

// Signals rlscope handles itself (through a signalfd) while COMMAND runs;
// SIGTSTP too when COMMAND does not own the terminal (Ctrl-Z reaches us).
sigset_t HandledSignals(bool give_terminal) {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, signal_number);
  if (!give_terminal) sigaddset(&set, SIGTSTP);
  return set;
}

// SignalGuard: while it lives, the handled signals (read through fd()),
// SIGPIPE (a closed stdout must not kill us before we report) and SIGTTOU
// (we move the terminal between process groups) are blocked. Launch() gives
// the command the mask rlscope inherited; Release() restores the caller's.
class SignalGuard {
 public:
  explicit SignalGuard(bool give_terminal) {
    const sigset_t handled = HandledSignals(give_terminal);
    sigset_t blocked = handled;
    sigaddset(&blocked, SIGPIPE);
    sigaddset(&blocked, SIGTTOU);
    sigprocmask(SIG_BLOCK, &blocked, &original_mask_);
    fd_ = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  ~SignalGuard() { Release(); }

  int fd() const { return fd_; }
  void Release() {
    if (released_) return;
    released_ = true;
    if (fd_ >= 0) close(fd_);
    sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
  }

 private:
  sigset_t original_mask_;
  int fd_ = -1;
  bool released_ = false;
};

// Session: one launched command and (when profiled) the streams of its
// processes.
class Session {
 public:
  Session(pid_t child, Receiver* receiver, int signal_fd, int terminal_fd, bool stop_with_command,
          StatusLine* status_line)
      : child_(child),
        receiver_(receiver),
        signal_fd_(signal_fd),
        terminal_fd_(terminal_fd),
        stop_with_command_(stop_with_command),
        status_line_(status_line) {}

  // Wait: runs until COMMAND has exited and its streams are closed (or the
  // drain timeout passed). Returns COMMAND's wait status.
  int Wait() {
    int64_t drain_deadline_ns = 0;
    std::vector<pollfd> fds;
    for (;;) {
      if (exited_) {
        if (receiver_ == nullptr || receiver_->open_connections() == 0) break;
        if (drain_deadline_ns == 0) drain_deadline_ns = NowNs(CLOCK_MONOTONIC) + kDrainTimeoutNs;
        if (NowNs(CLOCK_MONOTONIC) >= drain_deadline_ns) {
          still_open_ = receiver_->open_connections();
          receiver_->CloseAll();
          break;
        }
      }
      fds.clear();
      fds.push_back({signal_fd_, POLLIN, 0});
      if (receiver_ != nullptr) receiver_->AppendPollFds(fds);
      const int ready = poll(fds.data(), fds.size(), 100);
      if (ready < 0 && errno != EINTR) break;
      if (receiver_ != nullptr) receiver_->FlushAgedBlocks();
      if (ready <= 0) {
        UpdateStatusLine();
        continue;
      }
      if (fds[0].revents & POLLIN) HandleSignals();
      if (receiver_ != nullptr) receiver_->OnPollResult(fds.data() + 1, fds.size() - 1);
      UpdateStatusLine();
    }
    if (status_line_ != nullptr) status_line_->Erase();
    return wait_status_;
  }
  size_t still_open() const { return still_open_; }
  int64_t exit_ns() const { return exit_ns_; }
  int interrupted_by() const { return interrupted_by_; }

 private:
  // The status line runs while the command does (drawn at most every
  // 250 ms; the 100 ms poll timeout wakes us often enough), and goes as
  // soon as it exits: the report follows, and the drain may take seconds.
  void UpdateStatusLine() {
    if (status_line_ == nullptr) return;
    if (exited_) {
      status_line_->Erase();
      return;
    }
    const ReceiverStats& stats = receiver_ != nullptr ? receiver_->stats() : ReceiverStats{};
    status_line_->Update(NowNs(CLOCK_MONOTONIC), stats.connections, stats.events, stats.dropped);
  }
  void HandleSignals() {
    signalfd_siginfo info{};
    while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      const int signal_number = static_cast<int>(info.ssi_signo);
      if (signal_number == SIGCHLD) {
        Reap();
        continue;
      }
      if (interrupted_by_ == 0 && IsInterruption(signal_number)) interrupted_by_ = signal_number;
      // COMMAND leads its own process group, so whatever reached rlscope
      // (kill, a kill of our group, a scheduler) has not reached it yet.
      if (!exited_) kill(-child_, signal_number);
    }
  }
  void Reap() {
    int status = 0;
    while (!exited_) {
      const pid_t pid = waitpid(child_, &status, WNOHANG | WUNTRACED);
      if (pid <= 0) break;
      if (WIFSTOPPED(status)) {
        SuspendWithCommand();
        continue;
      }
      exited_ = true;
      wait_status_ = status;
      exit_ns_ = NowNs(CLOCK_MONOTONIC);
    }
  }
  // Ctrl-Z stopped COMMAND: stop rlscope too, so the shell sees its job
  // stopped and gets the terminal back; on `fg`/`bg` (SIGCONT to us), hand
  // the terminal back to COMMAND (if it had it) and continue it.
  void SuspendWithCommand() {
    if (!stop_with_command_) return;                     // Not interactive: a debugger's stop, say.
    if (status_line_ != nullptr) status_line_->Erase();  // The shell's "Stopped" line goes there.
    GiveTerminalTo(terminal_fd_, getpgrp());
    kill(getpid(), SIGSTOP);
    GiveTerminalTo(terminal_fd_, child_);
    kill(-child_, SIGCONT);
  }

  pid_t child_;
  Receiver* receiver_;
  int signal_fd_;
  int terminal_fd_;
  bool stop_with_command_;
  StatusLine* status_line_;
  bool exited_ = false;
  int wait_status_ = 0;
  int64_t exit_ns_ = 0;
  size_t still_open_ = 0;
  int interrupted_by_ = 0;
};

// StdioFiles: the files a command's stdin/stdout/stderr are redirected to,
// open for as long as it is being launched.
class StdioFiles {
 public:
  StdioFiles() = default;
  StdioFiles(const StdioFiles&) = delete;
  StdioFiles& operator=(const StdioFiles&) = delete;
  ~StdioFiles() {
    for (int fd : {fds_.in, fds_.out, fds_.err}) {
      if (fd >= 0) close(fd);
    }
  }
  absl::Status Open(const std::string& in, const std::string& out, const std::string& err) {
    if (absl::Status status = OpenOne(in, O_RDONLY, fds_.in); !status.ok()) return status;
    if (absl::Status status = OpenOne(out, O_WRONLY | O_CREAT | O_TRUNC, fds_.out); !status.ok()) return status;
    return OpenOne(err, O_WRONLY | O_CREAT | O_TRUNC, fds_.err);
  }
  const ChildStdio& fds() const { return fds_; }

 private:
  static absl::Status OpenOne(const std::string& path, int flags, int& fd) {
    if (path.empty()) return absl::OkStatus();
    // Files of a run or scratch directory: private, never through a link.
    fd = open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return absl::FailedPreconditionError(absl::StrFormat("cannot open %s: %s", path, strerror(errno)));
    return absl::OkStatus();
  }
  ChildStdio fds_;
};

// What one launched and awaited command did.
struct Waited {
  int wait_status = 0;
  int64_t start_unix_ns = 0;
  int64_t wall_ns = 0;
  int interrupted_by = 0;
  size_t still_open = 0;
};

// LaunchAndWait: the part both kinds of run share, timed identically. The
// caller holds a SignalGuard. Launch failures are Launch()'s own statuses.
absl::StatusOr<Waited> LaunchAndWait(const std::vector<std::string>& command,
                                     const std::vector<std::string>& environment, bool give_terminal,
                                     const ChildStdio& stdio, int signal_fd, Receiver* receiver,
                                     GpuUtilizationSampler* sampler, bool status_line = false) {
  const int controlling_terminal = ControllingTerminal();
  const int terminal_fd = give_terminal ? controlling_terminal : -1;
  Waited waited;
  waited.start_unix_ns = NowNs(CLOCK_REALTIME);
  const int64_t start_ns = NowNs(CLOCK_MONOTONIC);
  absl::StatusOr<pid_t> child = Launch(command, environment, terminal_fd, stdio);
  if (!child.ok()) return child.status();
  std::optional<StatusLine> line;
  if (status_line) line.emplace(STDERR_FILENO, start_ns);
  Session session(*child, receiver, signal_fd, terminal_fd, controlling_terminal >= 0, line ? &*line : nullptr);
  waited.wait_status = session.Wait();
  if (sampler != nullptr) sampler->Stop();
  GiveTerminalTo(terminal_fd, getpgrp());
  waited.wall_ns = session.exit_ns() - start_ns;
  waited.interrupted_by = session.interrupted_by();
  waited.still_open = session.still_open();
  return waited;
}

// PreemptedGpuCapture: the child's CUDA injection is another tool's.
bool PreemptedGpuCapture(const std::vector<std::string>& environment, const std::string& preload) {
  for (const std::string& entry : environment) {
    if (entry.rfind("CUDA_INJECTION64_PATH=", 0) == 0) return entry != "CUDA_INJECTION64_PATH=" + preload;
  }
  return false;
}

void RemoveSocket(const std::string& socket_path) {
  if (socket_path.starts_with('@')) return;  // Abstract: no file.
  unlink(socket_path.c_str());
  rmdir(std::filesystem::path(socket_path).parent_path().c_str());
}

// WithExtraEnvironment: `base` with each NAME=VALUE of `extra` replacing
// the entry of the same name, or added.
std::vector<std::string> WithExtraEnvironment(std::vector<std::string> base, const std::vector<std::string>& extra) {
  for (const std::string& entry : extra) {
    const std::string prefix = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (std::string& existing : base) {
      if (!prefix.empty() && existing.rfind(prefix, 0) == 0) {
        existing = entry;
        replaced = true;
        break;
      }
    }
    if (!replaced) base.push_back(entry);
  }
  return base;
}

// SetCaptureWindow: the window's times made absolute, from now (the
// run's start): every process of the run opens and closes together.
void SetCaptureWindow(const CaptureWindow& window, InjectionEnvironment& injection) {
  if (!window.any()) return;
  const int64_t start_ns = NowNs(CLOCK_MONOTONIC);
  if (window.delay_ns.has_value()) injection.capture_open_ns = start_ns + *window.delay_ns;
  if (window.duration_ns.has_value()) {
    injection.capture_close_ns = start_ns + window.delay_ns.value_or(0) + *window.duration_ns;
  }
  injection.capture_api = window.api;
  injection.capture_profiler_api = window.profiler_api;
  injection.capture_range = window.nvtx_range;
  injection.capture_signal = window.signal;
  if (window.by_instances()) {
    injection.capture_operation = window.operation.empty() ? report::kStepOperation : window.operation;
    injection.capture_skip = window.skip.value_or(0);
    injection.capture_count = window.count.value_or(-1);
    injection.capture_every = window.every.value_or(0);
  }
}

}  // namespace

uint64_t DefaultKeepFree(const std::string& dir) {
  struct statvfs filesystem {};
  if (statvfs(dir.c_str(), &filesystem) != 0) return 0;
  const uint64_t size = static_cast<uint64_t>(filesystem.f_blocks) * filesystem.f_frsize;
  return std::min<uint64_t>(uint64_t{1} << 30, size / 20);
}

void SetProfilingOptions(const ProfilingOptions& options, ProfileRequest& request) {
  request.rule_files = options.rule_files;
  request.simulator_patterns = options.simulator_patterns;
  request.backend_patterns = options.backend_patterns;
  request.communication_patterns = options.communication_patterns;
  request.nvtx_domains = options.nvtx_domains;
  request.cupti = options.cupti;
  request.cupti_path = options.cupti_path;
  request.calibration_path = options.calibration_path;
  request.keep_free_bytes = options.keep_free_bytes;
  request.capture = options.capture;
  request.uncompressed_trace = options.uncompressed_trace;
}

absl::StatusOr<ProfileOutcome> ProfileCommand(const ProfileRequest& request) {
  const std::string& prefix = request.log_prefix;
  // A full disk or a file size limit must be an error we report, not a
  // SIGXFSZ that kills the collector (the command gets the original back).
  IgnoreFileSizeSignal();
  absl::StatusOr<Installation> installation = FindInstallation();
  if (!installation.ok()) return absl::FailedPreconditionError(installation.status().message());
  // The calibration goes into DIR now, so the report is corrected with the
  // costs of the machine the run was made on, wherever it is analysed.
  std::string calibration_problem;
  if (request.apply_calibration) {
    const calibration::CalibrationChoice choice =
        calibration::ChooseCalibration(request.calibration_path, calibration::CurrentMachine(), RLSCOPE_VERSION);
    if (choice.model) {
      const std::string copy = (std::filesystem::path(request.run_dir) / run_layout::kCalibration).string();
      if (absl::Status written = calibration::WriteOverheadModel(copy, *choice.model); !written.ok()) {
        calibration_problem = absl::StrFormat("%s: the report will be uncorrected", written.message());
      }
    } else {
      calibration_problem = choice.message;
    }
    const std::string& say = calibration_problem.empty() ? choice.message : calibration_problem;
    if (!say.empty() && request.say_calibration_problem) std::cerr << prefix << ": " << say << "\n";
  }
  std::vector<std::string> rule_files = {installation->default_rules};
  rule_files.insert(rule_files.end(), request.rule_files.begin(), request.rule_files.end());
  StdioFiles stdio;
  if (absl::Status opened = stdio.Open(request.stdin_path, request.stdout_path, request.stderr_path); !opened.ok()) {
    return opened;
  }
  absl::StatusOr<std::string> socket_path = MakeSocketPath();
  if (!socket_path.ok()) return absl::InternalError(socket_path.status().message());
  // --keep-free 0 lets the trace fill the disk: room is held (before the
  // trace can take it) for what is written after it. Otherwise the space
  // kept free is that room.
  const uint64_t keep_free = request.keep_free_bytes.value_or(DefaultKeepFree(request.run_dir));
  ReportRoom report_room(request.run_dir, /*hold=*/keep_free == 0);
  absl::StatusOr<std::unique_ptr<Receiver>> receiver =
      Receiver::Listen(*socket_path, (std::filesystem::path(request.run_dir) / run_layout::kTraceDir).string());
  if (!receiver.ok()) {
    RemoveSocket(*socket_path);
    return absl::InternalError(receiver.status().message());
  }
  (*receiver)->KeepFree(keep_free, prefix);
  if (request.uncompressed_trace) (*receiver)->WriteUncompressed();

  SignalGuard signals(request.give_terminal);
  std::vector<std::string> warnings;
  InjectionEnvironment injection;
  injection.preload_path = installation->preload;
  injection.socket_path = *socket_path;
  injection.python_dir = installation->python_dir;
  injection.rule_files = rule_files;
  injection.simulator_patterns = absl::StrJoin(request.simulator_patterns, ",");
  injection.backend_patterns = absl::StrJoin(request.backend_patterns, ",");
  injection.communication_patterns = absl::StrJoin(request.communication_patterns, ",");
  injection.nvtx_domains = absl::StrJoin(request.nvtx_domains, ",");
  injection.cupti = request.cupti;
  injection.cupti_path = request.cupti_path;
  injection.quiet = request.quiet_preload;
  SetCaptureWindow(request.capture, injection);
  const std::vector<std::string> environment = BuildChildEnvironment(
      WithExtraEnvironment(CurrentEnvironment(), request.extra_environment), injection, &warnings);
  for (const std::string& warning : warnings) std::cerr << prefix << ": warning: " << warning << "\n";

  report::RunMetadata metadata;
  metadata.command = request.command;
  metadata.rlscope_version = RLSCOPE_VERSION;
  metadata.capture_request = DescribeCaptureWindow(request.capture);
  metadata.capture_delay_ns = request.capture.delay_ns.value_or(0);
  {
    std::error_code error;  // An unreachable working directory only costs relative paths in the report.
    const std::filesystem::path cwd = std::filesystem::current_path(error);
    if (!error) metadata.working_directory = cwd.string();
  }
  metadata.gpu_capture = !request.cupti                                            ? "off"
                         : PreemptedGpuCapture(environment, installation->preload) ? "preempted"
                                                                                   : "cupti";
  // nvidia-smi's view of the GPU, for the report to set against rlscope's
  // own (absent on machines without NVIDIA's driver: nothing to say then).
  std::unique_ptr<GpuUtilizationSampler> sampler;
  if (request.cupti && request.sample_nvidia_smi) {
    const std::filesystem::path dir(request.run_dir);
    absl::StatusOr<std::unique_ptr<GpuUtilizationSampler>> started =
        GpuUtilizationSampler::Start(GpuUtilizationSampler::kDefaultProgram, (dir / run_layout::kNvidiaSmiCsv).string(),
                                     (dir / run_layout::kNvidiaSmiStderr).string());
    if (started.ok()) {
      sampler = *std::move(started);
    } else if (!absl::IsNotFound(started.status())) {
      std::cerr << prefix << ": warning: nvidia-smi sampling not started: " << started.status().message() << "\n";
    }
  }
  // A provisional meta.json, replaced at the end: if rlscope itself is
  // killed mid-run, `rlscope report DIR` still knows the command and says
  // why the rest is missing. The command runs on without us (it is not
  // tied to our life: no PR_SET_PDEATHSIG, its own process group).
  const std::string meta_path = (std::filesystem::path(request.run_dir) / run_layout::kMeta).string();
  // The provisional meta.json and the one of a command that never ran:
  // a failure costs the report its metadata only, so it is a warning.
  auto write_metadata_or_warn = [&](const report::RunMetadata& written_metadata) {
    if (absl::Status written = report::WriteRunMetadata(meta_path, written_metadata); !written.ok()) {
      std::cerr << prefix << ": warning: " << written.message() << "\n";
    }
  };
  {
    report::RunMetadata provisional = metadata;
    provisional.exit_code = -1;
    provisional.start_unix_ns = NowNs(CLOCK_REALTIME);
    provisional.collector_problems.push_back(
        "rlscope stopped before the command ended (killed?): the command's exit status and wall time are "
        "unknown, and the traces end where rlscope stopped");
    write_metadata_or_warn(provisional);
  }
  // Copied first: the report reads the rules from DIR/rules/, and a
  // decoding that follows the run starts with them.
  if (absl::Status copied = CopyRules(request.run_dir, rule_files); !copied.ok()) {
    std::cerr << prefix << ": " << copied.message() << "\n";
  }
  // Not for plain traces (--uncompressed-trace), which are read whole at
  // the end (format/trace_reader.h).
  std::unique_ptr<LiveDecoding> live;
  if (request.decode_during_run && !request.uncompressed_trace &&
      ShouldDecodeDuringRun(std::getenv("RLSCOPE_LIVE_DECODING"), UsableCpus())) {
    try {
      // Kept for correction when the report will be corrected: the run's
      // calibration was copied into DIR above (WriteReport's lookup).
      live = std::make_unique<LiveDecoding>(request.run_dir,
                                            report::FindCorrection(request.run_dir, "").model.has_value());
    } catch (const std::exception&) {
      // No thread or memory to be had: the trace is decoded after the run.
    }
  }
  absl::StatusOr<Waited> waited = LaunchAndWait(request.command, environment, request.give_terminal, stdio.fds(),
                                                signals.fd(), receiver->get(), sampler.get(), request.status_line);
  // From here on a Ctrl-C (or SIGTERM) ends `rlscope run`: only the report is left.
  signals.Release();
  if (!waited.ok()) {
    receiver->reset();
    RemoveSocket(*socket_path);
    // The provisional meta.json would say rlscope was killed: say instead
    // that the command never ran (the exit status `rlscope run` gives).
    metadata.exit_code = ExitCodeOfLaunchFailure(waited.status());
    metadata.start_unix_ns = NowNs(CLOCK_REALTIME);
    metadata.collector_problems.push_back(
        absl::StrFormat("the command could not be started: %s", waited.status().message()));
    write_metadata_or_warn(metadata);
    return waited.status();
  }
  metadata.start_unix_ns = waited->start_unix_ns;
  metadata.exit_code = ExitCodeOf(waited->wait_status);
  metadata.wall_ns = waited->wall_ns;
  metadata.collector_problems = (*receiver)->problems();
  if (waited->still_open > 0) {
    metadata.collector_problems.push_back(
        absl::StrFormat("%d process(es) were still running %d s after the command exited; their traces end there",
                        waited->still_open, kDrainTimeoutNs / 1'000'000'000));
  }
  receiver->reset();
  RemoveSocket(*socket_path);
  report_room.Release();  // The trace is closed: its room is for what follows.
  std::shared_ptr<report::RunDecoding> decoding = live ? live->Stop() : nullptr;
  if (decoding != nullptr && decoding->following()) {
    metadata.trace_decoded_during_run_bytes = static_cast<int64_t>(decoding->followed_stream_bytes());
  }
  if (absl::Status written = report::WriteRunMetadata(meta_path, metadata); !written.ok()) {
    // The report may not be written either (a full disk): say here what
    // the collector had to say.
    std::cerr << prefix << ": " << written.message() << "\n";
    for (const std::string& problem : metadata.collector_problems) std::cerr << prefix << ": " << problem << "\n";
  }
  return ProfileOutcome{metadata.exit_code, metadata.wall_ns, waited->interrupted_by, calibration_problem,
                        std::move(decoding)};
}

absl::StatusOr<ProfileOutcome> RunUnprofiled(const UnprofiledRequest& request) {
  StdioFiles stdio;
  if (absl::Status opened = stdio.Open(request.stdin_path, request.stdout_path, request.stderr_path); !opened.ok()) {
    return opened;
  }
  SignalGuard signals(request.give_terminal);
  const std::vector<std::string> environment = WithExtraEnvironment(CurrentEnvironment(), request.extra_environment);
  absl::StatusOr<Waited> waited =
      LaunchAndWait(request.command, environment, request.give_terminal, stdio.fds(), signals.fd(), nullptr, nullptr);
  signals.Release();
  if (!waited.ok()) return waited.status();
  ProfileOutcome outcome;
  outcome.exit_code = ExitCodeOf(waited->wait_status);
  outcome.wall_ns = waited->wall_ns;
  outcome.interrupted_by = waited->interrupted_by;
  return outcome;
}

absl::StatusOr<ProfileOutcome> RunUnprofiled(const std::vector<std::string>& command,
                                             const std::vector<std::string>& extra_environment,
                                             const std::string& stdout_path) {
  UnprofiledRequest request;
  request.command = command;
  request.extra_environment = extra_environment;
  request.stdout_path = stdout_path;
  return RunUnprofiled(request);
}

}  // namespace rlscope::collector
