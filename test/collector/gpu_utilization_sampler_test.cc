// The nvidia-smi sampler against a fake nvidia-smi (test/fake_nvidia_smi):
// what it runs, how the child is set up, stopping and reaping it, and the
// failures a user can meet (no nvidia-smi, no driver).
#include "collector/gpu_utilization_sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "report/gpu_utilization.h"

#ifndef RLSCOPE_FAKE_NVIDIA_SMI_DIR
#error "RLSCOPE_FAKE_NVIDIA_SMI_DIR must name test/fake_nvidia_smi"
#endif

using rlscope::collector::FindProgram;
using rlscope::collector::GpuUtilizationSampler;
using rlscope::report::GpuUtilization;
using rlscope::report::SummarizeGpuUtilization;

namespace {

constexpr const char* kFakeDir = RLSCOPE_FAKE_NVIDIA_SMI_DIR;
constexpr auto kPatience = std::chrono::seconds(10);

// Sets (or with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// PATH with the fake's directory first (python3 is still found after it).
std::string PathWithFake() {
  const char* path = getenv("PATH");
  return std::string(kFakeDir) + ":" + (path != nullptr ? path : "/usr/bin:/bin");
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/rlscope_gpu_sampler_XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int CompleteLines(const std::string& path) {
  const std::string text = ReadFile(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Polls `done` until it holds or kPatience passes.
bool WaitFor(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

int64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// A line of /proc/PID/status ("SigBlk:\t0000000000000000" -> the value).
std::string ProcStatus(pid_t pid, const std::string& field) {
  std::istringstream status(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", field.size() + 1));
  }
  return {};
}

// Whether `pid` is no child of ours any more (reaped).
bool Reaped(pid_t pid) { return waitpid(pid, nullptr, WNOHANG) < 0 && errno == ECHILD; }

}  // namespace

TEST_CASE("sampler: samples both GPUs, with the child set up as rlscope run needs", "[gpu_sampler]") {
  TempDir dir;
  const std::string csv = dir / "nvidia-smi.csv";
  const std::string err = dir / "nvidia-smi.err";
  ScopedEnv path("PATH", PathWithFake().c_str());
  ScopedEnv util("FAKE_NVIDIA_SMI_UTIL", "37,90");
  // The sampler gives nvidia-smi TZ=UTC0; the window below is unaffected by ours.
  ScopedEnv zone("TZ", "JST-9");
  tzset();

  // As `rlscope run` does: these are blocked (read through a signalfd).
  sigset_t blocked, original;
  sigemptyset(&blocked);
  for (int signal_number : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTTOU}) {
    sigaddset(&blocked, signal_number);
  }
  REQUIRE(pthread_sigmask(SIG_BLOCK, &blocked, &original) == 0);
  // An ignored signal stays ignored across exec: the child must reset it.
  struct sigaction ignore {
  }, original_term{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ignore, &original_term);

  // Our stdin a pipe for the moment, so that the child's /dev/null is not inherited.
  int stdin_pipe[2];
  REQUIRE(pipe(stdin_pipe) == 0);
  const int saved_stdin = dup(STDIN_FILENO);
  dup2(stdin_pipe[0], STDIN_FILENO);

  const int64_t begin_ns = RealtimeNs();
  auto sampler = GpuUtilizationSampler::Start("nvidia-smi", csv, err, 50);
  dup2(saved_stdin, STDIN_FILENO);
  sigaction(SIGTERM, &original_term, nullptr);
  for (int fd : {saved_stdin, stdin_pipe[0], stdin_pipe[1]}) close(fd);
  REQUIRE(sampler.ok());
  GpuUtilizationSampler& s = **sampler;
  CHECK(s.program_path() == std::string(kFakeDir) + "/nvidia-smi");
  const pid_t pid = s.pid();

  // Running: three samples of each GPU.
  REQUIRE(WaitFor([&] { return CompleteLines(csv) >= 6; }));
  CHECK(s.Running());
  CHECK(getpgid(pid) == getpgrp());  // rlscope's group, not the command's
  CHECK(ProcStatus(pid, "SigBlk") == "0000000000000000");
  char stdin_target[256] = {};
  CHECK(readlink(("/proc/" + std::to_string(pid) + "/fd/0").c_str(), stdin_target, sizeof(stdin_target) - 1) > 0);
  CHECK(std::string(stdin_target) == "/dev/null");

  const auto stop_begin = std::chrono::steady_clock::now();
  s.Stop();
  CHECK(std::chrono::steady_clock::now() - stop_begin < kPatience);
  const int64_t end_ns = RealtimeNs();
  pthread_sigmask(SIG_SETMASK, &original, nullptr);

  CHECK(Reaped(pid));
  CHECK_FALSE(s.Running());
  CHECK_FALSE(s.exited_on_its_own());
  REQUIRE(s.wait_status().has_value());
  CHECK(WIFSIGNALED(*s.wait_status()));
  CHECK(WTERMSIG(*s.wait_status()) == SIGTERM);  // SIGTERM was enough: not blocked in the child
  s.Stop();                                      // idempotent
  CHECK(ReadFile(err).empty());

  const GpuUtilization result = SummarizeGpuUtilization(csv, err, begin_ns, end_ns);
  CHECK(result.problems.empty());
  CHECK(result.samples_outside_window == 0);
  REQUIRE(result.gpus.size() == 2);
  CHECK(result.gpus[0].gpu_index == 0);
  CHECK(result.gpus[0].samples >= 3);
  CHECK(result.gpus[0].mean_percent == Approx(37.0));
  CHECK(result.gpus[0].max_percent == 37);
  CHECK(result.gpus[1].gpu_index == 1);
  CHECK(result.gpus[1].samples >= 3);
  CHECK(result.gpus[1].mean_percent == Approx(90.0));
  CHECK(result.gpus[1].max_percent == 90);
}

TEST_CASE("sampler: the destructor stops and reaps", "[gpu_sampler]") {
  TempDir dir;
  ScopedEnv path("PATH", PathWithFake().c_str());
  auto sampler = GpuUtilizationSampler::Start("nvidia-smi", dir / "a.csv", dir / "a.err");
  REQUIRE(sampler.ok());
  const pid_t pid = (*sampler)->pid();
  CHECK((*sampler)->Running());
  sampler->reset();
  CHECK(Reaped(pid));
}

TEST_CASE("sampler: SIGKILL when nvidia-smi ignores SIGTERM, in bounded time", "[gpu_sampler]") {
  TempDir dir;
  const std::string csv = dir / "nvidia-smi.csv";
  ScopedEnv path("PATH", PathWithFake().c_str());
  ScopedEnv ignore("FAKE_NVIDIA_SMI_IGNORE_SIGTERM", "1");
  auto sampler = GpuUtilizationSampler::Start("nvidia-smi", csv, dir / "nvidia-smi.err", 20);
  REQUIRE(sampler.ok());
  const pid_t pid = (*sampler)->pid();
  // The fake ignores SIGTERM before its first sample.
  REQUIRE(WaitFor([&] { return CompleteLines(csv) >= 2; }));
  const auto stop_begin = std::chrono::steady_clock::now();
  (*sampler)->Stop();
  CHECK(std::chrono::steady_clock::now() - stop_begin < kPatience);
  CHECK(Reaped(pid));
  REQUIRE((*sampler)->wait_status().has_value());
  CHECK(WIFSIGNALED(*(*sampler)->wait_status()));
  CHECK(WTERMSIG(*(*sampler)->wait_status()) == SIGKILL);
}

TEST_CASE("sampler: a missing nvidia-smi is NotFound, and nothing is created", "[gpu_sampler]") {
  TempDir dir;
  const std::string csv = dir / "nvidia-smi.csv";
  SECTION("not on PATH") {
    ScopedEnv path("PATH", (dir / "bin").c_str());
    auto sampler = GpuUtilizationSampler::Start("nvidia-smi", csv, dir / "nvidia-smi.err");
    REQUIRE(sampler.status().code() == absl::StatusCode::kNotFound);
    CHECK_THAT(std::string(sampler.status().message()),
               Catch::Contains("nvidia-smi not found on PATH") && Catch::Contains(dir / "bin"));
  }
  SECTION("a path that does not exist") {
    auto sampler = GpuUtilizationSampler::Start(dir / "no/nvidia-smi", csv, dir / "nvidia-smi.err");
    REQUIRE(sampler.status().code() == absl::StatusCode::kNotFound);
    CHECK_THAT(std::string(sampler.status().message()), Catch::Contains(dir / "no/nvidia-smi"));
  }
  struct stat info {};
  CHECK(stat(csv.c_str(), &info) != 0);
}

TEST_CASE("sampler: PATH search skips what cannot run", "[gpu_sampler]") {
  TempDir dir;
  mkdir((dir / "a").c_str(), 0755);
  mkdir((dir / "a/nvidia-smi").c_str(), 0755);  // a directory
  mkdir((dir / "b").c_str(), 0755);
  std::ofstream(dir / "b/nvidia-smi") << "#!/bin/sh\n";  // not executable
  ScopedEnv path("PATH", (dir / "a" + ":" + dir / "b" + ":" + kFakeDir).c_str());
  auto found = FindProgram("nvidia-smi");
  REQUIRE(found.ok());
  CHECK(*found == std::string(kFakeDir) + "/nvidia-smi");
  CHECK(FindProgram(dir / "b/nvidia-smi").status().code() == absl::StatusCode::kPermissionDenied);
}

TEST_CASE("sampler: bad arguments and unwritable files are errors that say why", "[gpu_sampler]") {
  TempDir dir;
  const std::string fake = std::string(kFakeDir) + "/nvidia-smi";
  auto zero = GpuUtilizationSampler::Start(fake, dir / "a.csv", dir / "a.err", 0);
  CHECK(zero.status().code() == absl::StatusCode::kInvalidArgument);
  auto unwritable = GpuUtilizationSampler::Start(fake, dir / "missing/a.csv", dir / "a.err");
  REQUIRE_FALSE(unwritable.ok());
  CHECK_THAT(std::string(unwritable.status().message()), Catch::Contains(dir / "missing/a.csv"));
}

TEST_CASE("sampler: nvidia-smi without a driver exits; the report quotes its stderr", "[gpu_sampler]") {
  TempDir dir;
  const std::string csv = dir / "nvidia-smi.csv";
  const std::string err = dir / "nvidia-smi.err";
  ScopedEnv path("PATH", PathWithFake().c_str());
  ScopedEnv fail("FAKE_NVIDIA_SMI_FAIL", "1");
  const int64_t begin_ns = RealtimeNs();
  auto sampler = GpuUtilizationSampler::Start("nvidia-smi", csv, err);
  REQUIRE(sampler.ok());  // it started; it fails later, as the real one does
  const pid_t pid = (*sampler)->pid();
  REQUIRE(WaitFor([&] { return !(*sampler)->Running(); }));
  CHECK(Reaped(pid));
  CHECK((*sampler)->exited_on_its_own());
  REQUIRE((*sampler)->wait_status().has_value());
  CHECK(WIFEXITED(*(*sampler)->wait_status()));
  CHECK(WEXITSTATUS(*(*sampler)->wait_status()) == 9);
  (*sampler)->Stop();  // no-op: nothing left to signal

  const GpuUtilization result = SummarizeGpuUtilization(csv, err, begin_ns, RealtimeNs());
  CHECK(result.file_empty);
  CHECK(result.gpus.empty());
  REQUIRE(result.problems.size() == 1);
  CHECK(result.problems[0] ==
        "nvidia-smi printed no samples: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
        "driver. Make sure that the latest NVIDIA driver is installed and running.");
}

TEST_CASE("sampler: nvidia-smi does not outlive the process that started it", "[gpu_sampler]") {
  // We become the subreaper, so the orphaned sampler is reparented to us
  // and we can wait for it: it must die of SIGTERM (PR_SET_PDEATHSIG).
  REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  TempDir dir;
  const std::string csv = dir / "nvidia-smi.csv";
  ScopedEnv path("PATH", PathWithFake().c_str());
  int pid_pipe[2];
  REQUIRE(pipe(pid_pipe) == 0);
  const pid_t starter = fork();
  REQUIRE(starter >= 0);
  if (starter == 0) {
    close(pid_pipe[0]);
    auto sampler = GpuUtilizationSampler::Start("nvidia-smi", csv, dir / "nvidia-smi.err", 20);
    pid_t pid = sampler.ok() ? (*sampler)->pid() : -1;
    if (sampler.ok()) {
      WaitFor([&] { return CompleteLines(csv) >= 2; });
      sampler->release();  // leaked on purpose: no Stop, as if rlscope were killed
    }
    (void)!write(pid_pipe[1], &pid, sizeof(pid));
    _exit(0);
  }
  close(pid_pipe[1]);
  pid_t pid = -1;
  CHECK(read(pid_pipe[0], &pid, sizeof(pid)) == sizeof(pid));
  close(pid_pipe[0]);
  waitpid(starter, nullptr, 0);
  REQUIRE(pid > 0);

  int status = 0;
  const bool died = WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; });
  if (!died) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  REQUIRE(died);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
}
