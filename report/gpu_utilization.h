// GPU utilization as nvidia-smi reports it: the samples the collector's
// GpuUtilizationSampler wrote (DIR/nvidia-smi.csv), summarised per GPU over
// the run, to be shown next to the GPU-busy time rlscope measures itself.
//
// nvidia-smi's utilization.gpu is the percentage of its last sample period
// (1/6 s to 1 s, depending on the GPU) during which at least one kernel was
// running, however small: a GPU that runs one tiny kernel at a time reads
// ~100% while being almost idle, which is why the report puts the two side
// by side.
#ifndef RLSCOPE_REPORT_GPU_UTILIZATION_H_
#define RLSCOPE_REPORT_GPU_UTILIZATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/run_layout.h"

namespace rlscope::report {

// What a reader must know to compare nvidia-smi with the trace (the
// HTML pages print it under their charts).
inline constexpr const char* kNvidiaSmiCaveat =
    "nvidia-smi counts a sample period as busy when any kernel ran in it, however small: it reads high for RL "
    "workloads that run many tiny kernels.";

// One GPU's samples within the window. Only GPUs with at least one numeric
// sample in the window get one.
struct GpuUtilizationSummary {
  int gpu_index = 0;  // nvidia-smi's index (PCI bus order, not CUDA's order)
  int samples = 0;    // numeric samples in the window
  double mean_percent = 0;
  int max_percent = 0;
  int unavailable_samples = 0;  // in-window samples reading [N/A] and the like
};

struct GpuUtilization {
  std::vector<GpuUtilizationSummary> gpus;  // ascending gpu_index
  int samples_total = 0;                    // well-formed sample lines, in or out of the window
  int samples_outside_window = 0;
  int unavailable_values = 0;      // in-window samples reading [N/A], [Not Supported], ...
  int skipped_lines = 0;           // non-blank lines that are not samples, the partial last line included
  bool partial_last_line = false;  // the last line has no newline (nvidia-smi killed mid-write)
  bool file_missing = false;
  bool file_empty = false;  // exists, no bytes
  // For the user, ready to print; empty when all is well.
  std::vector<std::string> problems;
};

// SummarizeGpuUtilization: reads nvidia-smi's CSV output (the query
// `timestamp,index,utilization.gpu` in `csv,noheader,nounits` format) and
// summarises, per GPU, the samples whose timestamp lies in
// [begin_unix_ns, end_unix_ns] (CLOCK_REALTIME; timestamps are UTC, see
// ParseNvidiaSmiTimestamp). `stderr_path` is what
// nvidia-smi printed on stderr: it explains an empty file. Never fails: a
// missing or unreadable file sets `file_missing` and a problem message.
GpuUtilization SummarizeGpuUtilization(const std::string& csv_path, const std::string& stderr_path,
                                       int64_t begin_unix_ns, int64_t end_unix_ns);

// The same on the files' contents (`csv_name` names the file in messages).
GpuUtilization SummarizeGpuUtilizationText(std::string_view csv, std::string_view stderr_text, int64_t begin_unix_ns,
                                           int64_t end_unix_ns, std::string_view csv_name = run_layout::kNvidiaSmiCsv);

// ParseNvidiaSmiTimestamp: "2026/11/30 05:36:15.123" -> CLOCK_REALTIME ns,
// read as UTC (timegm). nvidia-smi prints local time without a zone; the
// sampler runs it with TZ=UTC0 so that its local time is UTC (checked on
// driver 580: nvidia-smi honours TZ). That makes the file independent of
// the zone `rlscope report` later runs in, and free of the hour a DST change
// repeats. nullopt if malformed.
std::optional<int64_t> ParseNvidiaSmiTimestamp(std::string_view text);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_GPU_UTILIZATION_H_
