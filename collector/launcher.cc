#include "collector/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/rule_file.h"

extern char** environ;

namespace rlscope::collector {

namespace {

// Replaces or adds NAME=VALUE; returns the previous value (empty if none).
std::string SetVariable(std::vector<std::string>& environment, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  for (std::string& entry : environment) {
    if (absl::StartsWith(entry, prefix)) {
      std::string previous = entry.substr(prefix.size());
      entry = prefix + value;
      return previous;
    }
  }
  environment.push_back(prefix + value);
  return {};
}

void RemoveVariable(std::vector<std::string>& environment, const std::string& name) {
  const std::string prefix = name + "=";
  std::erase_if(environment, [&](const std::string& entry) { return absl::StartsWith(entry, prefix); });
}

std::string GetVariable(const std::vector<std::string>& environment, const std::string& name) {
  const std::string prefix = name + "=";
  for (const std::string& entry : environment) {
    if (absl::StartsWith(entry, prefix)) return entry.substr(prefix.size());
  }
  return {};
}

// InjectUnlessTaken: points the injection variable `name` at the preload,
// unless it already names another tool: theirs then wins, and `warnings`
// says which level rlscope will not capture (`what_is_lost`).
void InjectUnlessTaken(std::vector<std::string>& environment, const std::string& name, const std::string& preload,
                       const char* what_is_lost, std::vector<std::string>* warnings) {
  const std::string current = GetVariable(environment, name);
  if (current.empty() || current == preload) {
    SetVariable(environment, name, preload);
  } else if (warnings != nullptr) {
    warnings->push_back(
        absl::StrFormat("%s is already set (%s): that tool owns it, so %s; unset it to let rlscope "
                        "capture them",
                        name, current, what_is_lost));
  }
}

// SIGXFSZ's disposition as rlscope inherited it (IgnoreFileSizeSignal).
struct sigaction g_inherited_file_size_action;
bool g_file_size_signal_ignored = false;

// The signal mask rlscope was started with (RememberInheritedSignalMask);
// empty until then.
sigset_t g_inherited_mask;
bool g_inherited_mask_saved = false;

// ExecFailure: why `command` could not be executed (exec's errno), coded
// for ExitCodeOfLaunchFailure as shells (bash, dash) decide: ENOENT is
// not found (127), whether the file or its #! interpreter is missing;
// any other errno is found but not executable (126).
absl::Status ExecFailure(const std::string& command, int exec_errno) {
  const bool has_slash = command.find('/') != std::string::npos;
  struct stat file {};
  const bool exists = has_slash && stat(command.c_str(), &file) == 0;
  if (exec_errno == ENOENT) {
    const char* reason = !has_slash ? "command not found"  // Looked up in PATH.
                         : exists   ? "its #! interpreter was not found"
                                    : strerror(ENOENT);
    return absl::NotFoundError(absl::StrFormat("cannot run '%s': %s", command, reason));
  }
  const bool directory = exec_errno == EACCES && exists && S_ISDIR(file.st_mode);
  return absl::PermissionDeniedError(
      absl::StrFormat("cannot run '%s': %s", command, directory ? "Is a directory" : strerror(exec_errno)));
}

}  // namespace

void RememberInheritedSignalMask() {
  if (g_inherited_mask_saved) return;
  g_inherited_mask_saved = sigprocmask(SIG_SETMASK, nullptr, &g_inherited_mask) == 0;
}

void IgnoreFileSizeSignal() {
  if (g_file_size_signal_ignored) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  g_file_size_signal_ignored = sigaction(SIGXFSZ, &ignore, &g_inherited_file_size_action) == 0;
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) environment.emplace_back(*entry);
  return environment;
}

std::vector<std::string> BuildChildEnvironment(const std::vector<std::string>& base,
                                               const InjectionEnvironment& injection,
                                               std::vector<std::string>* warnings) {
  std::vector<std::string> environment = base;
  const std::string preload = GetVariable(environment, "LD_PRELOAD");
  // Ours goes first so its definitions win over other preloads' as well.
  SetVariable(environment, "LD_PRELOAD",
              preload.empty() ? injection.preload_path : injection.preload_path + ":" + preload);
  SetVariable(environment, "RLSCOPE_SOCKET", injection.socket_path);
  // sitecustomize.py must come first on the path; it chains any other one.
  const std::string python_path = GetVariable(environment, "PYTHONPATH");
  SetVariable(environment, "PYTHONPATH",
              python_path.empty() ? injection.python_dir : injection.python_dir + ":" + python_path);
  // One variable per rules file: any character may appear in a path. The
  // older ':'-separated RLSCOPE_RULES is dropped, so an outer run's list
  // cannot leak in.
  std::erase_if(environment, [](const std::string& entry) {
    return absl::StartsWith(entry, absl::StrCat(kLegacyRulesVariable, "="));
  });
  SetVariable(environment, kRulesCountVariable, absl::StrCat(injection.rule_files.size()));
  for (size_t i = 0; i < injection.rule_files.size(); ++i) {
    SetVariable(environment, absl::StrCat(kRulesFileVariablePrefix, i), injection.rule_files[i]);
  }
  if (!injection.simulator_patterns.empty()) SetVariable(environment, "RLSCOPE_SIM", injection.simulator_patterns);
  if (!injection.backend_patterns.empty()) SetVariable(environment, "RLSCOPE_BACKEND", injection.backend_patterns);
  if (!injection.communication_patterns.empty()) {
    SetVariable(environment, "RLSCOPE_COMM", injection.communication_patterns);
  }
  if (!injection.nvtx_domains.empty()) SetVariable(environment, "RLSCOPE_NVTX_DOMAINS", injection.nvtx_domains);
  if (injection.quiet) {
    SetVariable(environment, "RLSCOPE_QUIET", "1");
  } else {
    RemoveVariable(environment, "RLSCOPE_QUIET");
  }
  const auto set_or_remove = [&](const char* name, bool set, const std::string& value) {
    if (set) {
      SetVariable(environment, name, value);
    } else {
      RemoveVariable(environment, name);
    }
  };
  set_or_remove("RLSCOPE_CAPTURE_OPEN_NS", injection.capture_open_ns >= 0, absl::StrCat(injection.capture_open_ns));
  set_or_remove("RLSCOPE_CAPTURE_CLOSE_NS", injection.capture_close_ns >= 0, absl::StrCat(injection.capture_close_ns));
  set_or_remove("RLSCOPE_CAPTURE_API", injection.capture_api, "1");
  set_or_remove("RLSCOPE_CAPTURE_PROFILER_API", injection.capture_profiler_api, "1");
  set_or_remove("RLSCOPE_CAPTURE_RANGE", !injection.capture_range.empty(), injection.capture_range);
  set_or_remove("RLSCOPE_CAPTURE_SIGNAL", injection.capture_signal > 0, absl::StrCat(injection.capture_signal));
  const bool by_instances = !injection.capture_operation.empty();
  set_or_remove("RLSCOPE_CAPTURE_OP", by_instances, injection.capture_operation);
  set_or_remove("RLSCOPE_CAPTURE_SKIP", by_instances, absl::StrCat(injection.capture_skip));
  set_or_remove("RLSCOPE_CAPTURE_COUNT", by_instances && injection.capture_count > 0,
                absl::StrCat(injection.capture_count));
  set_or_remove("RLSCOPE_CAPTURE_EVERY", by_instances && injection.capture_every > 0,
                absl::StrCat(injection.capture_every));
  InjectUnlessTaken(environment, "NVTX_INJECTION64_PATH", injection.preload_path, "rlscope will not see NVTX ranges",
                    warnings);
  if (injection.cupti) {
    if (!injection.cupti_path.empty()) SetVariable(environment, "RLSCOPE_CUPTI_PATH", injection.cupti_path);
    InjectUnlessTaken(environment, "CUDA_INJECTION64_PATH", injection.preload_path,
                      "rlscope will not see GPU activity or CUDA calls that bypass libcudart", warnings);
  }
  return environment;
}

int ControllingTerminal() {
  if (!isatty(STDIN_FILENO)) return -1;
  return tcgetpgrp(STDIN_FILENO) == getpgrp() ? STDIN_FILENO : -1;
}

void GiveTerminalTo(int terminal_fd, pid_t process_group) {
  if (terminal_fd >= 0) tcsetpgrp(terminal_fd, process_group);
}

absl::StatusOr<pid_t> Launch(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                             int terminal_fd, const ChildStdio& stdio) {
  if (argv.empty()) return absl::InvalidArgumentError("no command given");
  std::vector<char*> argv_pointers;
  for (const std::string& arg : argv) argv_pointers.push_back(const_cast<char*>(arg.c_str()));
  argv_pointers.push_back(nullptr);
  std::vector<char*> env_pointers;
  for (const std::string& entry : environment) env_pointers.push_back(const_cast<char*>(entry.c_str()));
  env_pointers.push_back(nullptr);

  // The child reports an exec failure's errno through a close-on-exec pipe:
  // a successful exec closes it and the parent reads nothing.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return absl::InternalError(absl::StrFormat("pipe: %s", strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) {
    close(error_pipe[0]);
    close(error_pipe[1]);
    return absl::InternalError(absl::StrFormat("fork: %s", strerror(errno)));
  }
  if (pid == 0) {
    close(error_pipe[0]);
    // Both sides set the group and the terminal, so neither order of the
    // parent and child running first leaves a window (as shells do). The
    // collector's mask blocks SIGTTOU, which tcsetpgrp needs here.
    setpgid(0, 0);
    GiveTerminalTo(terminal_fd, getpid());
    // The collector blocks the signals it reads through a signalfd; the
    // command gets the mask rlscope itself was given (a shell's blocked
    // SIGINT stays blocked). Dispositions: rlscope changes SIGXFSZ's only,
    // so an inherited SIG_IGN (nohup's SIGHUP) passes through exec as is.
    sigset_t mask;
    if (g_inherited_mask_saved) {
      mask = g_inherited_mask;
    } else {
      sigemptyset(&mask);
    }
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    // An ignored signal stays ignored across exec: give SIGXFSZ back.
    if (g_file_size_signal_ignored) sigaction(SIGXFSZ, &g_inherited_file_size_action, nullptr);
    // dup2 clears close-on-exec on the copy, so only the standard fds pass.
    const int redirects[][2] = {{stdio.in, STDIN_FILENO}, {stdio.out, STDOUT_FILENO}, {stdio.err, STDERR_FILENO}};
    for (const auto& [from, to] : redirects) {
      if (from >= 0 && from != to && dup2(from, to) < 0) {
        const int dup_errno = -errno;  // Negative: not exec's.
        (void)!write(error_pipe[1], &dup_errno, sizeof(dup_errno));
        _exit(126);
      }
    }
    environ = env_pointers.data();
    execvp(argv_pointers[0], argv_pointers.data());
    const int exec_errno = errno;
    (void)!write(error_pipe[1], &exec_errno, sizeof(exec_errno));
    _exit(exec_errno == ENOENT ? 127 : 126);  // Unseen (the parent reads the pipe); a shell's codes.
  }
  close(error_pipe[1]);
  setpgid(pid, pid);  // EACCES once the child has exec'd: it already did it.
  GiveTerminalTo(terminal_fd, pid);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n == sizeof(exec_errno)) {
    waitpid(pid, nullptr, 0);
    GiveTerminalTo(terminal_fd, getpgrp());
    if (exec_errno < 0) {
      return absl::InternalError(
          absl::StrFormat("cannot give '%s' its standard streams: %s", argv[0], strerror(-exec_errno)));
    }
    return ExecFailure(argv[0], exec_errno);
  }
  return pid;
}

int ExitCodeOfLaunchFailure(const absl::Status& status) {
  if (absl::IsNotFound(status)) return 127;
  if (absl::IsPermissionDenied(status)) return 126;
  return 1;
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace rlscope::collector
