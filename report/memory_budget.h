// MemoryBudget: whether this machine has the memory to analyse a run,
// decided before decoding it. The analysis holds every decoded event (see
// scripts/bench/RESULTS.md, "report-stage memory"), so a trace of hours can
// need more memory than the machine has; running out would get rlscope
// killed mid-analysis (and `rlscope run` with it, losing the command's exit
// status). Instead: a corrected report that would not fit falls back to the
// uncorrected one (about 2.5x less memory), and one that would not fit even
// so is refused with a message, the trace kept for a bigger machine.
//
// The need is estimated from the trace's size on disk with factors measured
// on the bundled workloads (per trace byte, net of the tool's own memory:
// the flood's CUDA calls 1.0 uncorrected / 2.2 corrected, ppo.py's Python
// calls 2.5 / 6.2); the larger ones, rounded up, are used.
#ifndef RLSCOPE_REPORT_MEMORY_BUDGET_H_
#define RLSCOPE_REPORT_MEMORY_BUDGET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rlscope::report {

inline constexpr double kUncorrectedBytesPerTraceByte = 3.0;
inline constexpr double kCorrectedBytesPerTraceByte = 7.0;
inline constexpr uint64_t kAnalysisBaseBytes = 64ull << 20;

// Environment override of the memory available to the analysis: bytes,
// with an optional K, M, G or T suffix (powers of 1024), or "unlimited"
// (no check).
inline constexpr char kReportMemoryEnv[] = "RLSCOPE_REPORT_MEMORY";

struct MemoryNeed {
  uint64_t uncorrected = 0;
  uint64_t corrected = 0;
};

// EstimateReportMemory: the peak memory of analysing `trace_bytes` of trace.
MemoryNeed EstimateReportMemory(uint64_t trace_bytes);

// ParseByteSize: a size as users write them: bytes with an optional K, M,
// G or T suffix (powers of 1024): "512M" -> 536870912; nullopt otherwise.
// (Also --keep-free's syntax.)
std::optional<uint64_t> ParseByteSize(const std::string& text);

// ParseMemorySize: ParseByteSize, or "unlimited" -> UINT64_MAX. Errors:
// InvalidArgument naming the text and RLSCOPE_REPORT_MEMORY.
absl::StatusOr<uint64_t> ParseMemorySize(const std::string& text);

// AvailableMemory: what this process may still use: MemAvailable from
// `meminfo_path` (/proc/meminfo), lowered to the room left under cgroup v2
// limits: memory.max - (memory.current - inactive_file) of `cgroup_dir`
// (the process's cgroup below /sys/fs/cgroup; "" to skip) and of each
// ancestor below the root. nullopt when none says.
std::optional<uint64_t> AvailableMemory(const std::string& meminfo_path, const std::string& cgroup_dir);

// CgroupDirOfThisProcess: /sys/fs/cgroup/<path> from /proc/self/cgroup's
// cgroup v2 line ("0::<path>"); "" on cgroup v1 or when unreadable.
std::string CgroupDirOfThisProcess();

// CgroupDirsUpward: `cgroup_dir` and its ancestors below the cgroup root
// (/sys/fs/cgroup, which holds no limits of its own), innermost first:
// where a container's limit may sit (on the cgroup or a parent slice).
std::vector<std::string> CgroupDirsUpward(const std::string& cgroup_dir);

enum class ReportPlan {
  kAsAsked,          // Fits (or the available memory is unknown).
  kUncorrectedOnly,  // The corrected analysis would not fit; the uncorrected one does.
  kTooLarge,         // Not even the uncorrected analysis fits.
};

// WithHeld: `available` memory plus `held` bytes already in use by the
// analysis itself (a decoding begun during the run), saturating.
inline std::optional<uint64_t> WithHeld(std::optional<uint64_t> available, uint64_t held) {
  if (!available) return std::nullopt;
  return *available > UINT64_MAX - held ? UINT64_MAX : *available + held;
}

// HeapInUse: the bytes this process's malloc has handed out (mallinfo2:
// in use from the heap, plus mapped blocks).
uint64_t HeapInUse();

// RoomForAnalysis: what an analysis that already holds `held_heap` bytes
// (measured with HeapInUse) may plan with: MemoryForReport's figure,
// where it was measured (available memory, which what is held has
// already left) with what is held added; a budget set with
// RLSCOPE_REPORT_MEMORY is a total, and stands as it is.
absl::StatusOr<std::optional<uint64_t>> RoomForAnalysis(uint64_t held_heap);

// PlanReport: what to analyse, given the need and what is available.
ReportPlan PlanReport(const MemoryNeed& need, std::optional<uint64_t> available, bool corrected);

// MemoryForReport: the available memory as the analysis should see it: the
// environment override when set (an error when it does not parse), else
// AvailableMemory of this process.
absl::StatusOr<std::optional<uint64_t>> MemoryForReport();

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_MEMORY_BUDGET_H_
