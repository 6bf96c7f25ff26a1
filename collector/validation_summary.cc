#include "collector/validation_summary.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rlscope::collector {

namespace {

std::string FormatPercent(double fraction) { return absl::StrFormat("%+.2f%%", fraction * 100); }

// The per-repetition line, and its header.
constexpr const char* kTableFormat = "%5s  %-5s  %12s  %12s  %12s  %12s  %9s\n";

// One summary line: label, mean, [min .. max], sd, what it is.
std::string SpreadLine(const std::string& label, const Spread& spread, const std::string& what,
                       std::string (*format)(double), std::string (*format_sd)(double)) {
  std::string line =
      absl::StrFormat("  %-26s %-10s [%s .. %s]  sd %s", label, format(spread.mean), format(spread.min),
                      format(spread.max), spread.count < 2 ? std::string("n/a") : format_sd(spread.stddev));
  return what.empty() ? line + "\n" : absl::StrCat(line, "   ", what, "\n");
}
std::string FormatSecondsValue(double s) { return absl::StrFormat("%.4f s", s); }
std::string FormatRatio(double x) { return absl::StrFormat("%.3fx", x); }
std::string FormatSignedPercent(double fraction) { return FormatPercent(fraction); }
std::string FormatUnsignedPercent(double fraction) { return absl::StrFormat("%.2f%%", fraction * 100); }

nlohmann::ordered_json SpreadJson(const Spread& spread) {
  return {{"mean", spread.mean},
          {"stddev", spread.count < 2 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(spread.stddev)},
          {"min", spread.min},
          {"max", spread.max}};
}

}  // namespace

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

std::string RepetitionLine(const Repetition& rep) {
  const double unprofiled = static_cast<double>(rep.unprofiled_wall_ns);
  return absl::StrFormat(
      kTableFormat, absl::StrCat(rep.index), rep.unprofiled_first ? "U P" : "P U",
      absl::StrFormat("%.4f", Seconds(rep.unprofiled_wall_ns)), absl::StrFormat("%.4f", Seconds(rep.profiled_wall_ns)),
      rep.corrected_wall_ns ? absl::StrFormat("%.4f", Seconds(*rep.corrected_wall_ns)) : "n/a",
      absl::StrFormat("%.3fx", static_cast<double>(rep.profiled_wall_ns) / unprofiled),
      rep.corrected_wall_ns ? FormatPercent((static_cast<double>(*rep.corrected_wall_ns) - unprofiled) / unprofiled)
                            : "n/a");
}

// The first uncorrected repetition's reason, or "" when all were corrected.
std::string UncorrectedReason(const std::vector<Repetition>& repetitions) {
  for (const Repetition& rep : repetitions) {
    if (!rep.corrected_wall_ns) return rep.correction_message;
  }
  return "";
}

// PythonHookLine: the Python hook's own time in the profiled runs, timed
// in-band, against what the calibration priced it at, when every run
// timed it. The correction removes the larger of the two
// (report/python_hook_check.h); the difference is shown as a share of the
// unprofiled wall time, which it matches where the hook ran on the main
// thread.
std::string PythonHookLine(const std::vector<Repetition>& repetitions) {
  double hook = 0, priced = 0, unprofiled = 0;
  for (const Repetition& rep : repetitions) {
    if (!rep.python_hook_ns || !rep.python_hook_priced_ns) return "";
    hook += static_cast<double>(*rep.python_hook_ns);
    priced += static_cast<double>(*rep.python_hook_priced_ns);
    unprofiled += static_cast<double>(rep.unprofiled_wall_ns);
  }
  if (repetitions.empty() || unprofiled <= 0) return "";
  const double n = static_cast<double>(repetitions.size());
  return absl::StrFormat(
      "  %-26s %.3f s timed in-band, priced %.3f s (means per run; %+.2f%% of the unprofiled wall): the "
      "correction removes the larger\n",
      "Python hook", hook / n / 1e9, priced / n / 1e9, 100 * (hook - priced) / unprofiled);
}

std::string FormatSummaryText(const std::vector<Repetition>& repetitions) {
  const ValidateSummary summary = SummarizeRepetitions(repetitions);
  std::string text = absl::StrFormat("\nsummary of %d repetition(s): mean [min .. max] and sample standard deviation\n",
                                     repetitions.size());
  text += SpreadLine("unprofiled wall", summary.unprofiled_s, "", FormatSecondsValue, FormatSecondsValue);
  text += SpreadLine("profiled wall", summary.profiled_s, "", FormatSecondsValue, FormatSecondsValue);
  if (summary.corrected) {
    text += SpreadLine("corrected wall", summary.corrected_s, "", FormatSecondsValue, FormatSecondsValue);
  }
  text += SpreadLine("raw overhead", summary.raw_overhead, "profiled / unprofiled", FormatRatio, FormatRatio);
  if (summary.corrected) {
    text += SpreadLine("bias", summary.bias, "(corrected - unprofiled) / unprofiled", FormatSignedPercent,
                       FormatUnsignedPercent);
  } else {
    text += absl::StrFormat("  %-26s n/a (uncorrected: %s)\n", "bias", UncorrectedReason(repetitions));
  }
  text += SpreadLine("uncorrected bias", summary.uncorrected_bias, "(profiled - unprofiled) / unprofiled",
                     FormatSignedPercent, FormatUnsignedPercent);
  text += absl::StrFormat("  %-26s %-10s (mean corrected - mean unprofiled) / mean unprofiled\n", "bias of means",
                          summary.corrected ? FormatPercent(summary.bias_of_means) : std::string("n/a"));
  text += absl::StrFormat("  %-26s %-10s (mean profiled - mean unprofiled) / mean unprofiled\n",
                          "uncorrected bias of means", FormatPercent(summary.uncorrected_bias_of_means));
  text += PythonHookLine(repetitions);
  return text;
}

Spread Summarize(const std::vector<double>& values) {
  Spread spread;
  spread.count = values.size();
  if (values.empty()) return spread;
  double sum = 0;
  for (double value : values) sum += value;
  spread.mean = sum / static_cast<double>(values.size());
  spread.min = *std::min_element(values.begin(), values.end());
  spread.max = *std::max_element(values.begin(), values.end());
  if (values.size() >= 2) {
    double squares = 0;
    for (double value : values) squares += (value - spread.mean) * (value - spread.mean);
    spread.stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  return spread;
}

ValidateSummary SummarizeRepetitions(const std::vector<Repetition>& repetitions) {
  std::vector<double> unprofiled, profiled, corrected, raw, uncorrected_bias, bias;
  bool all_corrected = !repetitions.empty();
  for (const Repetition& rep : repetitions) {
    const double u = Seconds(rep.unprofiled_wall_ns), p = Seconds(rep.profiled_wall_ns);
    unprofiled.push_back(u);
    profiled.push_back(p);
    raw.push_back(p / u);
    uncorrected_bias.push_back((p - u) / u);
    if (rep.corrected_wall_ns) {
      const double c = Seconds(*rep.corrected_wall_ns);
      corrected.push_back(c);
      bias.push_back((c - u) / u);
    } else {
      all_corrected = false;
    }
  }
  ValidateSummary summary;
  summary.unprofiled_s = Summarize(unprofiled);
  summary.profiled_s = Summarize(profiled);
  summary.raw_overhead = Summarize(raw);
  summary.uncorrected_bias = Summarize(uncorrected_bias);
  const double mean_unprofiled = summary.unprofiled_s.mean;
  summary.uncorrected_bias_of_means = (summary.profiled_s.mean - mean_unprofiled) / mean_unprofiled;
  summary.corrected = all_corrected;
  if (all_corrected) {
    summary.corrected_s = Summarize(corrected);
    summary.bias = Summarize(bias);
    summary.bias_of_means = (summary.corrected_s.mean - mean_unprofiled) / mean_unprofiled;
  }
  return summary;
}

nlohmann::ordered_json RepetitionsJson(const std::vector<Repetition>& repetitions) {
  nlohmann::ordered_json reps = nlohmann::ordered_json::array();
  for (const Repetition& rep : repetitions) {
    const double unprofiled = static_cast<double>(rep.unprofiled_wall_ns);
    const double raw = static_cast<double>(rep.profiled_wall_ns) / unprofiled;
    nlohmann::ordered_json order = rep.unprofiled_first ? nlohmann::ordered_json{"unprofiled", "profiled"}
                                                        : nlohmann::ordered_json{"profiled", "unprofiled"};
    reps.push_back(
        {{"rep", rep.index},
         {"order", order},
         {"unprofiled_wall_ns", rep.unprofiled_wall_ns},
         {"profiled_wall_ns", rep.profiled_wall_ns},
         {"corrected_wall_ns",
          rep.corrected_wall_ns ? nlohmann::ordered_json(*rep.corrected_wall_ns) : nlohmann::ordered_json(nullptr)},
         {"raw_overhead", raw},
         {"uncorrected_bias", raw - 1},
         {"bias", rep.corrected_wall_ns
                      ? nlohmann::ordered_json((static_cast<double>(*rep.corrected_wall_ns) - unprofiled) / unprofiled)
                      : nlohmann::ordered_json(nullptr)},
         {"run_dir", rep.run_dir},
         {"python_hook_ns",
          rep.python_hook_ns ? nlohmann::ordered_json(*rep.python_hook_ns) : nlohmann::ordered_json(nullptr)},
         {"python_hook_priced_ns", rep.python_hook_priced_ns ? nlohmann::ordered_json(*rep.python_hook_priced_ns)
                                                             : nlohmann::ordered_json(nullptr)}});
  }
  return reps;
}

nlohmann::ordered_json SummaryJson(const std::vector<Repetition>& repetitions) {
  if (repetitions.empty()) return nullptr;
  const ValidateSummary s = SummarizeRepetitions(repetitions);
  const nlohmann::ordered_json null = nullptr;
  return {{"unprofiled_wall_s", SpreadJson(s.unprofiled_s)},
          {"profiled_wall_s", SpreadJson(s.profiled_s)},
          {"corrected_wall_s", s.corrected ? SpreadJson(s.corrected_s) : null},
          {"raw_overhead", SpreadJson(s.raw_overhead)},
          {"uncorrected_bias", SpreadJson(s.uncorrected_bias)},
          {"bias", s.corrected ? SpreadJson(s.bias) : null},
          {"uncorrected_bias_of_means", s.uncorrected_bias_of_means},
          {"bias_of_means", s.corrected ? nlohmann::ordered_json(s.bias_of_means) : null}};
}

std::string RepetitionTableHeader() {
  return absl::StrFormat(kTableFormat, "rep", "order", "unprofiled s", "profiled s", "corrected s", "raw overhead",
                         "bias");
}

}  // namespace rlscope::collector
