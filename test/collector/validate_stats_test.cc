// The statistics of `rlscope validate`: per-repetition ratios, their mean,
// sample standard deviation and range, and the biases of means, checked
// against values computed by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "collector/validation_summary.h"

using rlscope::collector::Repetition;
using rlscope::collector::Spread;
using rlscope::collector::Summarize;
using rlscope::collector::SummarizeRepetitions;
using rlscope::collector::ValidateSummary;

namespace {

Repetition Rep(int index, double unprofiled_s, double profiled_s, std::optional<double> corrected_s) {
  Repetition rep;
  rep.index = index;
  rep.unprofiled_wall_ns = std::llround(unprofiled_s * 1e9);
  rep.profiled_wall_ns = std::llround(profiled_s * 1e9);
  if (corrected_s) rep.corrected_wall_ns = std::llround(*corrected_s * 1e9);
  return rep;
}

}  // namespace

TEST_CASE("Summarize: mean, sample standard deviation, min, max") {
  // Deviations from 2.5: -1.5 -0.5 0.5 1.5; squares sum to 5; / (4 - 1).
  const Spread spread = Summarize({3, 1, 4, 2});
  CHECK(spread.count == 4);
  CHECK(spread.mean == Approx(2.5));
  CHECK(spread.stddev == Approx(std::sqrt(5.0 / 3.0)));
  CHECK(spread.min == 1);
  CHECK(spread.max == 4);
}

TEST_CASE("Summarize: one value has no spread, none has nothing") {
  const Spread one = Summarize({7});
  CHECK(one.count == 1);
  CHECK(one.mean == 7);
  CHECK(one.stddev == 0);
  CHECK(one.min == 7);
  CHECK(one.max == 7);
  const Spread none = Summarize({});
  CHECK(none.count == 0);
  CHECK(none.mean == 0);
}

TEST_CASE("SummarizeRepetitions: overhead, biases and biases of means") {
  // unprofiled 1.0, 2.0; profiled 1.5, 2.5; corrected 1.1, 1.9 (seconds).
  const ValidateSummary summary = SummarizeRepetitions({Rep(1, 1.0, 1.5, 1.1), Rep(2, 2.0, 2.5, 1.9)});
  CHECK(summary.unprofiled_s.mean == Approx(1.5));
  CHECK(summary.profiled_s.mean == Approx(2.0));
  // Raw overhead 1.5 and 1.25: mean 1.375, sd 0.25 / sqrt(2).
  CHECK(summary.raw_overhead.mean == Approx(1.375));
  CHECK(summary.raw_overhead.stddev == Approx(0.25 / std::sqrt(2.0)));
  CHECK(summary.raw_overhead.min == Approx(1.25));
  CHECK(summary.raw_overhead.max == Approx(1.5));
  // Uncorrected bias = raw overhead - 1: 0.5 and 0.25.
  CHECK(summary.uncorrected_bias.mean == Approx(0.375));
  CHECK(summary.uncorrected_bias.stddev == Approx(summary.raw_overhead.stddev));
  // (2.0 - 1.5) / 1.5.
  CHECK(summary.uncorrected_bias_of_means == Approx(1.0 / 3.0));
  REQUIRE(summary.corrected);
  CHECK(summary.corrected_s.mean == Approx(1.5));
  // Bias 0.1 and -0.05: mean 0.025, sd 0.15 / sqrt(2); yet the corrected
  // mean equals the unprofiled one, so the bias of means is 0.
  CHECK(summary.bias.mean == Approx(0.025));
  CHECK(summary.bias.stddev == Approx(0.15 / std::sqrt(2.0)));
  CHECK(summary.bias.min == Approx(-0.05));
  CHECK(summary.bias.max == Approx(0.1));
  CHECK(summary.bias_of_means == Approx(0.0).margin(1e-12));
}

TEST_CASE("SummarizeRepetitions: one uncorrected repetition leaves the corrected figures out") {
  const ValidateSummary summary = SummarizeRepetitions({Rep(1, 1.0, 1.5, 1.1), Rep(2, 2.0, 2.5, std::nullopt)});
  CHECK_FALSE(summary.corrected);
  CHECK(summary.raw_overhead.mean == Approx(1.375));
  CHECK(summary.uncorrected_bias_of_means == Approx(1.0 / 3.0));
}

TEST_CASE("The Python hook's timed time and price are summarised when every run has them") {
  std::vector<Repetition> reps = {Rep(1, 10, 12, 11), Rep(2, 10, 12, 11)};
  CHECK(rlscope::collector::FormatSummaryText(reps).find("Python hook") == std::string::npos);
  for (Repetition& rep : reps) {
    rep.python_hook_ns = 400'000'000;
    rep.python_hook_priced_ns = 150'000'000;
  }
  const std::string text = rlscope::collector::FormatSummaryText(reps);
  // 0.25 s more than priced, of 10 s unprofiled.
  CHECK(text.find("Python hook                0.400 s timed in-band, priced 0.150 s (means per run; +2.50% of the "
                  "unprofiled wall)") != std::string::npos);
  const auto json = rlscope::collector::RepetitionsJson(reps);
  CHECK(json[0]["python_hook_ns"] == 400'000'000);
  CHECK(json[1]["python_hook_priced_ns"] == 150'000'000);
  reps[1].python_hook_ns.reset();  // One run without: no line.
  CHECK(rlscope::collector::FormatSummaryText(reps).find("Python hook") == std::string::npos);
}
