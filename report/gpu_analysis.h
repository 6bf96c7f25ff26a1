// GpuAnalysis: what one process's GPUs did and who asked for it, from the
// activities CUPTI recorded:
//   rows         device busy time per (operation, Kernel|Memcpy|Memset),
//                attributed by overlap: the operation the process's main
//                timeline was in meanwhile (RL-Scope's view). Per device,
//                busy time is the union of its activities; where kinds
//                overlap, Kernel beats Memcpy beats Memset, so the rows of
//                a device sum to its busy time.
//   by_launch    the same work attributed by launch: to the operation (and
//                Python line) of the CPU call whose correlation id the
//                activity carries (summed durations, not a union).
//   operations   per operation: its wall time on the main timeline and how
//                much of it some GPU was busy (the true GPU-busy fraction),
//                and the kernels it launched. "(none)" holds the GPU work
//                while the main timeline was in no operation (JAX's
//                asynchronous dispatch returns before its work runs) and
//                "(launch not seen)" the kernels whose launching call was
//                not seen, so the rows sum to busy_ns, kernels, kernel_ns.
// Totals agree with rows for every kind of launch: by launch, an activity
// without a seen call is "(launch not seen)"'s; by overlap, launches do
// not matter. The GPU rows of one device sum to its busy time; busy_ns is
// the union over devices (less than the rows' sum where devices overlap).
//
// In a corrected report (overhead_correction.h) the overlap views (rows,
// busy_ns, each operation's gpu_busy_ns and gpu_busy_fraction) are the
// measured ones: GPU time is not corrected, and which operation it
// overlapped is decided on the measured timeline; wall_ns is corrected,
// so there gpu_busy_ns can exceed it (the fraction stays the measured one).
// By-launch views follow each call's owner, decided before correction.
#ifndef RLSCOPE_REPORT_GPU_ANALYSIS_H_
#define RLSCOPE_REPORT_GPU_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "report/breakdown.h"
#include "report/category.h"
#include "report/process_timeline.h"
#include "report/thread_analysis.h"

namespace rlscope::report {

struct GpuLaunchRow {
  std::string operation;
  Category category = Category::kGpuKernel;
  uint64_t count = 0;
  int64_t ns = 0;
};

struct GpuKernelRow {
  std::string operation;  // By launch.
  std::string kernel;     // Demangled name.
  uint64_t count = 0;
  int64_t ns = 0;
};

struct GpuLineRow {
  std::string operation;
  std::string location;  // "qualname (file:firstline)" of the launching Python code.
  uint32_t line = 0;
  uint64_t activities = 0;
  int64_t ns = 0;
};

// Per CUDA function CUPTI saw: how often it was called and what GPU work
// its calls produced (a graph launch or a library call can start many
// kernels; a synchronize none). Explains kernel counts against launches.
struct ApiGpuRow {
  std::string api;
  uint64_t calls = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
};

struct OperationGpuRow {
  std::string operation;
  int64_t wall_ns = 0;           // Time in the operation on the main timeline.
  int64_t gpu_busy_ns = 0;       // Of that, while some GPU of the process was busy (measured).
  double gpu_busy_fraction = 0;  // gpu_busy_ns / wall_ns, on the measured timeline.
  uint64_t kernels = 0;          // Launched by the operation (by launch).
  int64_t kernel_ns = 0;
};

struct GpuAnalysis {
  // Capture state for the report: "captured", "degraded", "missing",
  // "not initialized" (the program never started CUDA through the driver
  // injection), "off" (rlscope run --no-cupti), "unused" (no CUDA at all).
  std::string status;
  std::string message;
  uint32_t devices = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0;  // Summed durations.
  int64_t busy_ns = 0;                                  // Union over all devices: some GPU was busy.
  uint64_t launch_calls = 0;                            // CUDA calls CUPTI saw (nested driver calls excluded).
  uint64_t unattributed = 0;                            // Activities whose launching call was not seen.
  uint64_t before_launch = 0;     // Activities that began before their launching call: clock skew.
  uint64_t dropped = 0;           // Records CUPTI or rlscope lost.
  int64_t cupti_overhead_ns = 0;  // CPU time CUPTI reported spending on itself.
  Breakdown rows;                 // Resource kGpu.
  std::vector<GpuLaunchRow> by_launch;
  std::vector<GpuKernelRow> kernels_by_launch;  // Top kMaxKernelsPerOperation per operation.
  std::vector<GpuLineRow> lines;                // Top kMaxLinesPerOperation per operation.
  std::vector<OperationGpuRow> operations;
  std::vector<ApiGpuRow> apis;
};

inline constexpr size_t kMaxKernelsPerOperation = 20;
inline constexpr size_t kMaxLinesPerOperation = 10;

// GpuBusyIntervals: when any GPU of the process was busy (sorted, disjoint).
IntervalList GpuBusyIntervals(const std::vector<GpuActivity>& activities);

// AnalyseGpu: `launches` are every thread's resolved CUDA calls;
// `main_operations` the process's main operation timeline
// (InheritedOperations); `busy` its GpuBusyIntervals; `gpu_capture` the
// run's setting (RunMetadata). `measured` (may be null): the same
// process's measured analysis, when this one is of the corrected
// timeline: its overlap views are kept (see the file comment).
GpuAnalysis AnalyseGpu(const ProcessTimeline& process, const std::vector<ResolvedLaunch>& launches,
                       const IntervalList& main_operations, const IntervalList& busy, const std::string& gpu_capture,
                       bool used_cuda, NameTable& names, const GpuAnalysis* measured = nullptr);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_GPU_ANALYSIS_H_
