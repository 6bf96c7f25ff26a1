// ValidationSummary: what `rlscope validate` measured, summarised: the
// repetitions' spreads (raw overhead, bias of the corrected wall time),
// as the text it prints and the JSON it writes (validate.json).
#ifndef RLSCOPE_COLLECTOR_VALIDATION_SUMMARY_H_
#define RLSCOPE_COLLECTOR_VALIDATION_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

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
  // The Python hook timed in the profiled run and its price
  // (report/python_hook_check.h); empty when the report has no such check.
  std::optional<int64_t> python_hook_ns;
  std::optional<int64_t> python_hook_priced_ns;
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

// Seconds: nanoseconds as seconds.
double Seconds(int64_t ns);

// The per-repetition table: its header and one repetition's line.
std::string RepetitionTableHeader();
std::string RepetitionLine(const Repetition& rep);

// UncorrectedReason: the first uncorrected repetition's reason, or "" when
// all were corrected.
std::string UncorrectedReason(const std::vector<Repetition>& repetitions);

// FormatSummaryText: the summary validate prints after the table.
std::string FormatSummaryText(const std::vector<Repetition>& repetitions);

// validate.json's "repetitions" and "summary" (null without repetitions).
nlohmann::ordered_json RepetitionsJson(const std::vector<Repetition>& repetitions);
nlohmann::ordered_json SummaryJson(const std::vector<Repetition>& repetitions);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_VALIDATION_SUMMARY_H_
