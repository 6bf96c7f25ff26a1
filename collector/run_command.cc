// `rlscope run`: profile a command. Starts the receiver, launches the
// command with the preload injected, forwards signals, waits for the
// command and for its processes' last events, then writes and prints the
// report. Exits with the command's own exit code.
#include "run_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli_args.h"
#include "gpu_utilization.h"
#include "gpu_utilization_sampler.h"
#include "launcher.h"
#include "receiver.h"
#include "report_command.h"
#include "run_directory.h"
#include "rule_file.h"
#include "run_metadata.h"

namespace rlscope::collector {

namespace {

constexpr const char* kRunUsage = R"USAGE(usage: rlscope run [OPTIONS] [--] COMMAND [ARGS...]

Profile COMMAND and print where its time went: per operation (inferred from
the Python functions running - simulation, inference, backprop, replay - or
given by NVTX ranges and rlscope.operation(); "(none)" outside any) and per
level of the stack (Python, Backend, Simulator, Native, CUDA API).
COMMAND runs unchanged, with the rlscope preload injected into it and into
every process it starts; nothing in it needs editing.

options:
  --out DIR            write the run into DIR (created; must not hold a run
                       already). default: ./rlscope-out/<date>-<time>-<name>
  --rules FILE         more operation/library rules (format: the comments
                       of share/rlscope/rules/default.rules); repeatable
  --sim LIB:PATTERN    also time calls to functions matching the glob
                       PATTERN in libraries matching LIB as Simulator time,
                       e.g. --sim '*libmysim*:sim_step*'; repeatable
  --backend LIB:PATTERN
                       calls from the program itself (not from its
                       libraries) to functions matching PATTERN in libraries
                       matching LIB are Backend time: for native programs
                       using an ML backend's C++ API (libtorch's is hooked
                       by default); repeatable
  --nvtx-domain GLOB   NVTX ranges of named domains matching GLOB are
                       operations too (default: only the default domain's;
                       libraries such as CUB and XLA annotate their
                       internals in their own domains); repeatable
  --cupti PATH         the CUPTI library to use for the GPU level (default:
                       the one the program already loaded, else
                       libcupti.so.13 from the loader path, $CUDA_HOME or
                       /usr/local/cuda)
  --no-cupti           do not capture the GPU level (GPU activity, CUDA
                       calls that bypass libcudart): for comparing overhead,
                       or when another tool needs CUPTI
  --quiet              do not print the report at the end (still written)
  -h, --help           show this help

results (in DIR):
  trace/<pid>.rlt  the raw event stream of each traced process
  meta.json        command, exit status, wall time
  report.json      the breakdown, for tools (schema rlscope.report/1)
  report.txt       the breakdown, for people (also printed to stderr, so the
                   command's own stdout stays exactly as without rlscope)

exit status: COMMAND's own (128+N if it died of signal N); 127 if COMMAND
cannot be run; 2 for a usage error; 1 if rlscope itself failed before
starting COMMAND.

signals: COMMAND runs in its own process group, which owns the terminal
(Ctrl-C and Ctrl-Z reach it directly, as from a shell). SIGINT, SIGTERM,
SIGHUP and SIGQUIT sent to rlscope (or to its process group) are passed on
to COMMAND's group once; rlscope then waits for COMMAND to finish and still
writes the report. After COMMAND exits, Ctrl-C stops the report.
)USAGE";

// After COMMAND exits, its descendants may still be flushing; wait this
// long for their streams to close before reporting without them.
constexpr int64_t kDrainTimeoutNs = 5'000'000'000;

int64_t NowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct RunOptions {
  std::optional<std::string> out;
  bool quiet = false;
  std::vector<std::string> rule_files;
  std::vector<std::string> simulator_patterns;
  std::vector<std::string> backend_patterns;
  std::vector<std::string> nvtx_domains;
  bool cupti = true;
  std::string cupti_path;
  std::vector<std::string> command;
};

absl::StatusOr<RunOptions> ParseRunOptions(const std::vector<std::string>& args, bool* help) {
  RunOptions options;
  ArgCursor cursor(args);
  while (cursor.AtOption()) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      *help = true;
      return options;
    } else if (option.name == "--out" || option.name == "-o") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("run", std::string(value.status().message()));
      options.out = *value;
    } else if (option.name == "--quiet" || option.name == "-q") {
      options.quiet = true;
    } else if (option.name == "--rules") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("run", std::string(value.status().message()));
      // Checked now, so a typo fails before the (possibly long) run.
      RuleSet rules;
      std::string error;
      if (!LoadRuleFiles(*value, rules, &error)) return UsageError("run", error);
      options.rule_files.push_back(std::filesystem::absolute(*value).string());
    } else if (option.name == "--sim" || option.name == "--backend") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("run", std::string(value.status().message()));
      const size_t colon = value->find(':');
      if (colon == 0 || colon == std::string::npos || colon + 1 == value->size() ||
          value->find(',') != std::string::npos) {
        return UsageError("run",
                          absl::StrFormat("%s wants LIB:PATTERN (two globs), not '%s'", option.name, *value));
      }
      (option.name == "--sim" ? options.simulator_patterns : options.backend_patterns).push_back(*value);
    } else if (option.name == "--nvtx-domain") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("run", std::string(value.status().message()));
      if (value->empty() || value->find(',') != std::string::npos) {
        return UsageError("run", absl::StrFormat("--nvtx-domain wants one glob, not '%s'", *value));
      }
      options.nvtx_domains.push_back(*value);
    } else if (option.name == "--cupti") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("run", std::string(value.status().message()));
      std::error_code error;
      if (!std::filesystem::is_regular_file(*value, error)) {
        return UsageError("run", absl::StrFormat("--cupti: %s is not a file", *value));
      }
      options.cupti_path = std::filesystem::absolute(*value).string();
    } else if (option.name == "--no-cupti") {
      options.cupti = false;
    } else {
      return UsageError("run", absl::StrFormat("unknown option '%s'", option.name));
    }
  }
  if (cursor.AtSeparator()) cursor.Take();
  options.command = cursor.TakeRest();
  if (options.command.empty()) return UsageError("run", "no command to profile was given");
  return options;
}

// Signals rlscope handles itself (through a signalfd) while COMMAND runs.
sigset_t HandledSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, signal_number);
  return set;
}

// Session: one launched command and the streams of its processes.
class Session {
 public:
  Session(pid_t child, Receiver& receiver, int signal_fd, int terminal_fd)
      : child_(child), receiver_(receiver), signal_fd_(signal_fd), terminal_fd_(terminal_fd) {}

  // Wait: runs until COMMAND has exited and its streams are closed (or the
  // drain timeout passed). Returns COMMAND's wait status.
  int Wait() {
    int64_t drain_deadline_ns = 0;
    std::vector<pollfd> fds;
    for (;;) {
      if (exited_) {
        if (receiver_.open_connections() == 0) break;
        if (drain_deadline_ns == 0) drain_deadline_ns = NowNs(CLOCK_MONOTONIC) + kDrainTimeoutNs;
        if (NowNs(CLOCK_MONOTONIC) >= drain_deadline_ns) {
          still_open_ = receiver_.open_connections();
          receiver_.CloseAll();
          break;
        }
      }
      fds.clear();
      fds.push_back({signal_fd_, POLLIN, 0});
      receiver_.AppendPollFds(fds);
      const int ready = poll(fds.data(), fds.size(), 100);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      if (fds[0].revents & POLLIN) HandleSignals();
      receiver_.OnPollResult(fds.data() + 1, fds.size() - 1);
    }
    return wait_status_;
  }
  size_t still_open() const { return still_open_; }
  int64_t exit_ns() const { return exit_ns_; }

 private:
  void HandleSignals() {
    signalfd_siginfo info{};
    while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      if (info.ssi_signo == SIGCHLD) {
        Reap();
      } else if (!exited_) {
        // COMMAND leads its own process group, so whatever reached rlscope
        // (kill, a kill of our group, a scheduler) has not reached it yet.
        kill(-child_, static_cast<int>(info.ssi_signo));
      }
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
  // the terminal back to COMMAND and continue it.
  void SuspendWithCommand() {
    if (terminal_fd_ < 0) return;  // Not interactive: a debugger's stop, say.
    GiveTerminalTo(terminal_fd_, getpgrp());
    kill(getpid(), SIGSTOP);
    GiveTerminalTo(terminal_fd_, child_);
    kill(-child_, SIGCONT);
  }

  pid_t child_;
  Receiver& receiver_;
  int signal_fd_;
  int terminal_fd_;
  bool exited_ = false;
  int wait_status_ = 0;
  int64_t exit_ns_ = 0;
  size_t still_open_ = 0;
};

// PreemptedGpuCapture: the child's CUDA injection is another tool's.
bool PreemptedGpuCapture(const std::vector<std::string>& environment, const std::string& preload) {
  for (const std::string& entry : environment) {
    if (entry.rfind("CUDA_INJECTION64_PATH=", 0) == 0) return entry != "CUDA_INJECTION64_PATH=" + preload;
  }
  return false;
}

void RemoveSocket(const std::string& socket_path) {
  unlink(socket_path.c_str());
  rmdir(std::filesystem::path(socket_path).parent_path().c_str());
}

}  // namespace

int RunCommandMain(const std::vector<std::string>& args) {
  bool help = false;
  absl::StatusOr<RunOptions> options = ParseRunOptions(args, &help);
  if (help) {
    std::cout << kRunUsage;
    return 0;
  }
  if (!options.ok()) {
    std::cerr << options.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<Installation> installation = FindInstallation();
  if (!installation.ok()) {
    std::cerr << "rlscope run: " << installation.status().message() << "\n";
    return 1;
  }
  std::vector<std::string> rule_files = {installation->default_rules};
  rule_files.insert(rule_files.end(), options->rule_files.begin(), options->rule_files.end());
  absl::StatusOr<std::string> run_dir = PrepareRunDirectory(options->out, options->command);
  if (!run_dir.ok()) {
    std::cerr << "rlscope run: " << run_dir.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::string> socket_path = MakeSocketPath();
  if (!socket_path.ok()) {
    std::cerr << "rlscope run: " << socket_path.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Receiver>> receiver =
      Receiver::Listen(*socket_path, (std::filesystem::path(*run_dir) / "trace").string());
  if (!receiver.ok()) {
    std::cerr << "rlscope run: " << receiver.status().message() << "\n";
    RemoveSocket(*socket_path);
    return 1;
  }

  // Block the handled signals (read through a signalfd), SIGPIPE (a closed
  // stdout must not kill us before we report) and SIGTTOU (we move the
  // terminal between process groups). Launch() gives the command a clean
  // mask; the original one returns once the command has exited.
  sigset_t blocked = HandledSignals();
  sigaddset(&blocked, SIGPIPE);
  sigaddset(&blocked, SIGTTOU);
  sigset_t original_mask;
  sigprocmask(SIG_BLOCK, &blocked, &original_mask);
  const sigset_t handled = HandledSignals();
  const int signal_fd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);

  std::vector<std::string> warnings;
  const std::vector<std::string> environment =
      BuildChildEnvironment(CurrentEnvironment(),
                            {installation->preload, *socket_path, installation->python_dir,
                             absl::StrJoin(rule_files, ":"), absl::StrJoin(options->simulator_patterns, ","),
                             absl::StrJoin(options->backend_patterns, ","), absl::StrJoin(options->nvtx_domains, ","),
                             options->cupti, options->cupti_path},
                            &warnings);
  for (const std::string& warning : warnings) std::cerr << "rlscope run: warning: " << warning << "\n";

  report::RunMetadata metadata;
  metadata.command = options->command;
  metadata.rlscope_version = RLSCOPE_VERSION;
  metadata.start_unix_ns = NowNs(CLOCK_REALTIME);
  metadata.gpu_capture = !options->cupti ? "off" : PreemptedGpuCapture(environment, installation->preload) ? "preempted"
                                                                                                          : "cupti";
  const int64_t start_ns = NowNs(CLOCK_MONOTONIC);
  // nvidia-smi's view of the GPU, for the report to set against rlscope's
  // own (absent on machines without NVIDIA's driver: nothing to say then).
  std::unique_ptr<GpuUtilizationSampler> sampler;
  if (options->cupti) {
    const std::filesystem::path dir(*run_dir);
    absl::StatusOr<std::unique_ptr<GpuUtilizationSampler>> started =
        GpuUtilizationSampler::Start(GpuUtilizationSampler::kDefaultProgram,
                                     (dir / report::kNvidiaSmiCsvFileName).string(),
                                     (dir / report::kNvidiaSmiStderrFileName).string());
    if (started.ok()) {
      sampler = *std::move(started);
    } else if (!absl::IsNotFound(started.status())) {
      std::cerr << "rlscope run: warning: nvidia-smi sampling not started: " << started.status().message() << "\n";
    }
  }
  const int terminal_fd = ControllingTerminal();
  absl::StatusOr<pid_t> child = Launch(options->command, environment, terminal_fd);
  if (!child.ok()) {
    std::cerr << "rlscope run: " << child.status().message() << "\n";
    receiver->reset();
    RemoveSocket(*socket_path);
    return 127;
  }
  Session session(*child, **receiver, signal_fd, terminal_fd);
  const int wait_status = session.Wait();
  if (sampler != nullptr) sampler->Stop();
  GiveTerminalTo(terminal_fd, getpgrp());
  // From here on a Ctrl-C (or SIGTERM) ends rlscope: only the report is left.
  close(signal_fd);
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  metadata.exit_code = ExitCodeOf(wait_status);
  metadata.wall_ns = session.exit_ns() - start_ns;
  metadata.collector_problems = (*receiver)->problems();
  if (session.still_open() > 0) {
    metadata.collector_problems.push_back(absl::StrFormat(
        "%d process(es) were still running %d s after the command exited; their traces end there",
        session.still_open(), kDrainTimeoutNs / 1'000'000'000));
  }
  receiver->reset();
  RemoveSocket(*socket_path);

  if (absl::Status copied = CopyRules(*run_dir, rule_files); !copied.ok()) {
    std::cerr << "rlscope run: " << copied.message() << "\n";
  }
  const std::string meta_path = (std::filesystem::path(*run_dir) / "meta.json").string();
  if (absl::Status written = report::WriteRunMetadata(meta_path, metadata); !written.ok()) {
    std::cerr << "rlscope run: " << written.message() << "\n";
  }
  ReportOutcome outcome = WriteReport(*run_dir);
  if (!outcome.status.ok()) {
    std::cerr << "rlscope run: " << outcome.status.message() << "\n";
  } else if (!options->quiet) {
    std::cerr << "\n" << outcome.text << "\nrlscope: results in " << *run_dir << "/\n";
  }
  return metadata.exit_code;
}

}  // namespace rlscope::collector
