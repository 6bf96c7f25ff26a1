#include "collector/gpu_utilization_sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

extern char** environ;

namespace rlscope::collector {

namespace {

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

bool IsExecutableFile(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Moves a close-on-exec `fd` to 3 or above, so that the child's dup2s onto
// 0, 1 and 2 cannot overwrite one another (rlscope may run with stdin or
// stdout closed, and then open() returns those numbers).
int AboveStdio(int fd) {
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int saved_errno = errno;
  close(fd);
  errno = saved_errno;
  return moved;
}

// Owns the fds Start opens until the child has them.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) close(fd);
  }
  int Add(int fd) {
    if (fd >= 0) fds.push_back(fd);
    return fd;
  }
};

absl::StatusOr<int> OpenForChild(Fds& owned, const std::string& path, int flags, const char* role) {
  // Private, like every file of a run directory; a link is never followed.
  const int fd = owned.Add(AboveStdio(open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600)));
  if (fd < 0)
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot open %s for nvidia-smi's %s: %s", path, role, strerror(errno)));
  return fd;
}

int64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

void SleepMs(int ms) {
  const timespec pause{0, static_cast<long>(ms) * 1000000};
  nanosleep(&pause, nullptr);  // EINTR only shortens one poll interval.
}

}  // namespace

absl::StatusOr<std::string> FindProgram(const std::string& program) {
  if (program.empty()) return absl::InvalidArgumentError("no program named");
  if (absl::StrContains(program, '/')) {
    struct stat info {};
    if (stat(program.c_str(), &info) != 0) {
      return absl::NotFoundError(absl::StrFormat("%s: %s", program, strerror(errno)));
    }
    if (!S_ISREG(info.st_mode) || access(program.c_str(), X_OK) != 0) {
      return absl::PermissionDeniedError(absl::StrFormat("%s is not an executable file", program));
    }
    return program;
  }
  const char* path_variable = getenv("PATH");
  const std::string path = path_variable != nullptr ? path_variable : kDefaultPath;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string directory = path.substr(start, end - start);
    const std::string candidate = directory.empty() ? program : directory + "/" + program;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return absl::NotFoundError(absl::StrFormat("%s not found on PATH (%s)", program, path));
}

absl::StatusOr<std::unique_ptr<GpuUtilizationSampler>> GpuUtilizationSampler::Start(const std::string& program,
                                                                                    const std::string& csv_path,
                                                                                    const std::string& stderr_path,
                                                                                    int interval_ms) {
  if (interval_ms < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GPU sampling interval must be at least 1 ms, not %d", interval_ms));
  }
  absl::StatusOr<std::string> program_path = FindProgram(program);
  if (!program_path.ok()) return program_path.status();

  Fds owned;
  absl::StatusOr<int> csv_fd = OpenForChild(owned, csv_path, O_WRONLY | O_CREAT | O_TRUNC, "samples");
  if (!csv_fd.ok()) return csv_fd.status();
  absl::StatusOr<int> stderr_fd = OpenForChild(owned, stderr_path, O_WRONLY | O_CREAT | O_TRUNC, "stderr");
  if (!stderr_fd.ok()) return stderr_fd.status();
  absl::StatusOr<int> null_fd = OpenForChild(owned, "/dev/null", O_RDONLY, "stdin");
  if (!null_fd.ok()) return null_fd.status();
  // The child reports an exec failure's errno through a close-on-exec pipe:
  // a successful exec closes it and the parent reads nothing.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return absl::InternalError(absl::StrFormat("pipe: %s", strerror(errno)));
  const int error_read = owned.Add(AboveStdio(error_pipe[0]));
  const int error_write = owned.Add(AboveStdio(error_pipe[1]));
  if (error_read < 0 || error_write < 0) return absl::InternalError(absl::StrFormat("pipe: %s", strerror(errno)));

  // Everything the child needs is built before fork: rlscope has threads,
  // so the child may only make async-signal-safe calls.
  const std::vector<std::string> args = {
      *program_path,
      "--query-gpu=timestamp,index,utilization.gpu",
      "--format=csv,noheader,nounits",
      absl::StrFormat("--loop-ms=%d", interval_ms),
  };
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  // TZ=UTC0: nvidia-smi's timestamps are local time without a zone; in UTC
  // they read back the same in any zone (gpu_utilization.h).
  std::string utc = "TZ=UTC0";
  std::vector<char*> envp;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (!absl::StartsWith(*entry, "TZ=")) envp.push_back(*entry);
  }
  envp.push_back(utc.data());
  envp.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrFormat("fork: %s", strerror(errno)));
  if (pid == 0) {
    // Dies with rlscope (with the forking thread, strictly); the check
    // covers rlscope having died before prctl took effect.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    // No setpgid: the sampler stays in rlscope's group, out of reach of
    // the signals rlscope forwards to the command's group and of Ctrl-C.
    dup2(*null_fd, STDIN_FILENO);
    dup2(*csv_fd, STDOUT_FILENO);
    dup2(*stderr_fd, STDERR_FILENO);
    // Ignored signals stay ignored across exec, and rlscope blocks the ones
    // it reads through its signalfd: SIGTERM must reach nvidia-smi.
    for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
      if (signal_number != SIGKILL && signal_number != SIGSTOP) signal(signal_number, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
#ifdef SYS_close_range
    // rlscope's fds (its socket, the command's pipes) are close-on-exec
    // already; this catches any that are not. Unsupported kernels: ignored.
    syscall(SYS_close_range, STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
    execve(argv[0], argv.data(), envp.data());
    const int exec_errno = errno;
    (void)!write(error_write, &exec_errno, sizeof(exec_errno));
    _exit(127);
  }
  close(error_write);
  owned.fds.pop_back();  // error_write, added last
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(error_read, &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(exec_errno)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return absl::FailedPreconditionError(absl::StrFormat("cannot run %s: %s", *program_path, strerror(exec_errno)));
  }
  return std::unique_ptr<GpuUtilizationSampler>(new GpuUtilizationSampler(pid, *std::move(program_path)));
}

GpuUtilizationSampler::~GpuUtilizationSampler() { Stop(); }

bool GpuUtilizationSampler::TryReap() {
  if (reaped_) return true;
  int status = 0;
  pid_t result;
  do {
    result = waitpid(pid_, &status, WNOHANG);
  } while (result < 0 && errno == EINTR);
  if (result == pid_) {
    wait_status_ = status;
    reaped_ = true;
  } else if (result < 0) {
    // ECHILD: reaped elsewhere (a wait for any child, or SIGCHLD set to
    // SIG_IGN). It is gone; its status is lost.
    reaped_ = true;
  }
  return reaped_;
}

bool GpuUtilizationSampler::Running() {
  if (reaped_) return false;
  if (TryReap()) {
    exited_on_its_own_ = true;
    return false;
  }
  return true;
}

void GpuUtilizationSampler::Stop() {
  if (!Running()) return;
  // Not reaped, so the pid is still ours (a zombie at worst): safe to signal.
  kill(pid_, SIGTERM);
  const int64_t deadline = MonotonicNs() + int64_t{kStopGraceMs} * 1000000;
  // Polling, not sigtimedwait: rlscope's signalfd must keep every SIGCHLD.
  int pause_ms = 1;
  while (!TryReap() && MonotonicNs() < deadline) {
    SleepMs(pause_ms);
    pause_ms = std::min(pause_ms * 2, 20);
  }
  if (reaped_) return;
  kill(pid_, SIGKILL);
  int status = 0;
  pid_t result;
  do {
    result = waitpid(pid_, &status, 0);
  } while (result < 0 && errno == EINTR);
  if (result == pid_) wait_status_ = status;
  reaped_ = true;
}

}  // namespace rlscope::collector
