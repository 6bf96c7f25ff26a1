// GpuUtilizationSampler: runs NVIDIA's nvidia-smi beside the profiled
// command, sampling utilization.gpu into a CSV file in the run directory
// (report/gpu_utilization.h reads it), so the report can show what
// nvidia-smi claims next to the GPU time rlscope measures.
//
//   nvidia-smi --query-gpu=timestamp,index,utilization.gpu
//              --format=csv,noheader,nounits --loop-ms=<interval>
//
// runs with stdout to the CSV file, stderr to a second file (to explain a
// failure), stdin from /dev/null and TZ=UTC0, so that its timestamps are UTC.
//
// Process handling, made to fit `rlscope run`:
//  - The child starts with an empty signal mask (rlscope blocks SIGCHLD,
//    SIGTERM, ... to read them through a signalfd) and default dispositions.
//  - It stays in rlscope's process group: signals rlscope forwards to the
//    profiled command's group, and Ctrl-C at the terminal, do not reach it.
//  - It gets SIGTERM when the thread that started it ends
//    (PR_SET_PDEATHSIG), so it never outlives rlscope, even one killed by
//    SIGKILL. Start it from the thread that lives for the whole run.
//  - It is reaped by its own pid only (waitpid(pid, ...), never
//    waitpid(-1)): rlscope waits for the profiled command by its pid, and a
//    wait for any child would steal that command's exit status. rlscope's
//    signalfd sees one more SIGCHLD when the sampler ends; it must (and
//    does) tolerate SIGCHLDs that are not the command's.
#ifndef RLSCOPE_COLLECTOR_GPU_UTILIZATION_SAMPLER_H_
#define RLSCOPE_COLLECTOR_GPU_UTILIZATION_SAMPLER_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace rlscope::collector {

class GpuUtilizationSampler {
 public:
  static constexpr int kDefaultIntervalMs = 100;
  static constexpr const char* kDefaultProgram = "nvidia-smi";
  // How long Stop waits after SIGTERM before SIGKILL.
  static constexpr int kStopGraceMs = 2000;

  // Start: runs `program` (a path, or a bare name searched on PATH) with
  // stdout truncated into `csv_path` and stderr into `stderr_path`.
  // NotFound when the program does not exist (a machine without NVIDIA's
  // driver: callers skip sampling); InvalidArgument for interval_ms < 1;
  // another error when the files cannot be created or the program cannot
  // be executed. A program that starts and then fails (no driver loaded)
  // is not an error here: it exits, and its stderr explains the empty CSV.
  static absl::StatusOr<std::unique_ptr<GpuUtilizationSampler>> Start(const std::string& program,
                                                                      const std::string& csv_path,
                                                                      const std::string& stderr_path,
                                                                      int interval_ms = kDefaultIntervalMs);

  GpuUtilizationSampler(const GpuUtilizationSampler&) = delete;
  GpuUtilizationSampler& operator=(const GpuUtilizationSampler&) = delete;
  ~GpuUtilizationSampler();  // Stop()s.

  // Stop: SIGTERM, up to kStopGraceMs for it to exit, then SIGKILL; reaps
  // it in all cases. Returns at once if it already exited. Idempotent.
  void Stop();

  // Running: whether the child is still running; reaps it (without
  // blocking) if it has exited on its own, e.g. nvidia-smi finding no
  // driver. A caller may call it on SIGCHLD; Stop does not need it.
  bool Running();

  pid_t pid() const { return pid_; }  // stays valid (for logs) after reaping
  const std::string& program_path() const { return program_path_; }
  // How it ended, as waitpid reports it; nullopt until reaped (or if
  // something else reaped it: a waitpid(-1), SIGCHLD set to SIG_IGN).
  std::optional<int> wait_status() const { return wait_status_; }
  // Whether it ended before Stop asked it to: nvidia-smi failed.
  bool exited_on_its_own() const { return exited_on_its_own_; }

 private:
  GpuUtilizationSampler(pid_t pid, std::string program_path) : pid_(pid), program_path_(std::move(program_path)) {}
  // Reaps without blocking; true once reaped.
  bool TryReap();

  pid_t pid_;
  std::string program_path_;
  bool reaped_ = false;  // once true, pid_ may belong to another process
  std::optional<int> wait_status_;
  bool exited_on_its_own_ = false;
};

// FindProgram: `program` if it holds a '/', else the first executable
// regular file named `program` in $PATH's directories (empty entries mean
// the current directory; an unset PATH means /usr/local/bin:/usr/bin:/bin).
// NotFound, naming the directories searched, if there is none.
absl::StatusOr<std::string> FindProgram(const std::string& program);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_GPU_UTILIZATION_SAMPLER_H_
