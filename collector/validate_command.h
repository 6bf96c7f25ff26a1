// `rlscope validate [-n N] [--warmup K] [--out DIR] [OPTIONS] -- COMMAND...`:
// runs COMMAND unprofiled and profiled N times, interleaved, and reports
// the raw overhead (profiled / unprofiled wall time) and the bias of the
// corrected total ((corrected - unprofiled) / unprofiled), each with its
// spread. See kValidateUsage in validate_command.cc.
#ifndef RLSCOPE_COLLECTOR_VALIDATE_COMMAND_H_
#define RLSCOPE_COLLECTOR_VALIDATE_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlscope::collector {

// Spread: how a set of per-repetition numbers is distributed.
struct Spread {
  size_t count = 0;
  double mean = 0;
  double stddev = 0;  // Sample standard deviation (n - 1 in the denominator); 0 when count < 2.
  double min = 0;
  double max = 0;
};

// Summarize: the Spread of `values` (all zero when empty).
Spread Summarize(const std::vector<double>& values);

// One measured repetition: an unprofiled and a profiled run of COMMAND.
struct Repetition {
  int index = 0;  // 1-based.
  bool unprofiled_first = true;
  int64_t unprofiled_wall_ns = 0;
  int64_t profiled_wall_ns = 0;  // The profiled run's meta.json wall_ns.
  // The profiled run's report's estimate of the unprofiled wall time; empty
  // when that report was not corrected.
  std::optional<int64_t> corrected_wall_ns;
  std::string correction_message;  // Why not, when it was not corrected.
  std::string run_dir;             // The profiled run's directory, relative to validate's.
};

struct ValidateSummary {
  Spread unprofiled_s, profiled_s;
  Spread raw_overhead;                   // profiled_i / unprofiled_i
  Spread uncorrected_bias;               // (profiled_i - unprofiled_i) / unprofiled_i = raw_overhead_i - 1
  double uncorrected_bias_of_means = 0;  // (mean profiled - mean unprofiled) / mean unprofiled
  // Only when every repetition was corrected:
  bool corrected = false;
  Spread corrected_s;
  Spread bias;               // (corrected_i - unprofiled_i) / unprofiled_i
  double bias_of_means = 0;  // (mean corrected - mean unprofiled) / mean unprofiled
};

// SummarizeRepetitions: the summary of `repetitions` (at least one, every
// unprofiled wall time > 0).
ValidateSummary SummarizeRepetitions(const std::vector<Repetition>& repetitions);

// ValidateCommandMain: `args` are the arguments after "validate".
int ValidateCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_VALIDATE_COMMAND_H_
