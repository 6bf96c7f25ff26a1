// Categories: the stack levels time is attributed to, and resources (which
// of CPU/GPU is busy). Names are the report.json contract: never rename.
#ifndef RLSCOPE_REPORT_CATEGORY_H_
#define RLSCOPE_REPORT_CATEGORY_H_

#include <cstdint>
#include <string_view>

namespace rlscope::report {

// CPU categories, innermost level wins when they nest, then the GPU ones
// (what a busy GPU was doing). The numeric order is display order, not
// nesting order.
enum class Category : int32_t {
  kPython = 0,     // Interpreter time outside native calls.
  kBackend = 1,    // ML backend native code (torch, jaxlib, ...).
  kSimulator = 2,  // Simulator native code.
  kNative = 3,     // Other native code; a non-Python thread's remaining time.
  kCudaApi = 4,    // Inside a CUDA runtime/driver API call.
  kProfiler = 5,   // rlscope's own overhead (uncorrected views only).
  kGpuKernel = 6,  // GPU: a kernel ran ("Kernel").
  kGpuMemcpy = 7,  // GPU: a copy, no kernel ("Memcpy").
  kGpuMemset = 8,  // GPU: a memset, no kernel or copy ("Memset").
  // CPU: the thread was blocked, not working ("Wait"): inside a blocking
  // call the Python hook recognised (lock/Condition/Event/queue wait,
  // sleep, select/poll, socket receive, os.read, waitpid; wire kPythonWait),
  // or a span the flusher saw the thread blocked in, outside its native
  // calls (wire kThreadIdle, idle_waits.h); innermost-wins like the others.
  // Per-thread rows keep it (they partition the thread's lifetime: work +
  // Wait); process-level rows and every
  // operation total leave it out (run_report.h), so an idle thread adds no
  // time to any operation. Appended: numbers above are report contract.
  kWait = 9,
  // CPU: talking to other ranks of a distributed job: torch.distributed's
  // collectives and point-to-point calls, MPI, NCCL ("Communication"),
  // told by library rules (rule_file.h: caller=). Innermost-wins like the
  // others; how much of it was waiting for other ranks is the job view's
  // (job_ranks.h). Appended: numbers above are report contract.
  // GPU (resource GPU): a device ran communication kernels (NCCL's) and no
  // other kernel: the exposed communication. Communication overlapped by
  // compute is Kernel time, as one device instant has one category; the
  // kernel tables still list every NCCL kernel with its full time.
  kCommunication = 10,
  kCount
};

// CPU: a thread's time while no GPU of its process was busy; CPU+GPU: a
// thread's time while one was (RL-Scope's overlap); GPU: a device's busy
// time (categories kGpu*).
enum class Resource : int32_t { kCpu = 0, kGpu = 1, kCpuGpu = 2, kCount };

std::string_view CategoryName(Category category);
std::string_view ResourceName(Resource resource);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_CATEGORY_H_
