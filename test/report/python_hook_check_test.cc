#include "report/python_hook_check.h"

#include <catch2/catch.hpp>

#include "format/wire_format.h"

using namespace rlscope::report;
namespace wire = rlscope::wire;

namespace {

ProcessCorrection Correction(uint64_t samples, double sample_ns) {
  ProcessCorrection correction;
  correction.python_hook_samples = samples;
  correction.python_hook_sample_ns = sample_ns;
  correction.by_site["python_call@3.12"] = {1000, 60'000, 0};
  correction.by_site["python_transition@3.12"] = {100, 20'000, 0};
  correction.by_site["code_setup"] = {10, 5'000, 0};
  correction.by_site["python_process@3.12"] = {1, 9'000'000, 0};  // Start-up: no callback.
  correction.by_site["cuda_hook"] = {500, 10'000, 0};             // Not the Python hook's.
  return correction;
}

}  // namespace

TEST_CASE("too few timed callbacks say nothing", "[python_hook_check]") {
  CHECK_FALSE(CheckPythonHook(Correction(kMinTimedCallbacks - 1, 1000)).has_value());
  CHECK(CheckPythonHook(Correction(kMinTimedCallbacks, 1000)).has_value());
}

TEST_CASE("the hook's time is extrapolated by the stride; its price is the callbacks' sites", "[python_hook_check]") {
  const auto check = CheckPythonHook(Correction(100, 100 * 50.0));
  REQUIRE(check.has_value());
  CHECK(check->timed_callbacks == 100);
  CHECK(check->callbacks == 100 * wire::kPythonHookSampleStride);
  CHECK(check->per_callback_ns == Approx(50));
  CHECK(check->hook_ns == Approx(50.0 * 100 * wire::kPythonHookSampleStride));
  CHECK(check->priced_ns == Approx(60'000 + 20'000 + 5'000));
}

TEST_CASE("a price below the hook's own time is named as under-correction", "[python_hook_check]") {
  // 100 x 256 callbacks of 10 ns: 256 us, above the 85 us priced.
  const auto under = CheckPythonHook(Correction(100, 100 * 10.0));
  REQUIRE(under.has_value());
  CHECK(under->under_priced_ns() == Approx(256'000 - 85'000));
  const std::string line = DescribePythonHookCheck(*under);
  CHECK(line.find("under-corrected by at least") != std::string::npos);
  // 100 x 256 callbacks of 1 ns: 25.6 us, below the price: no claim.
  const auto covered = CheckPythonHook(Correction(100, 100 * 1.0));
  REQUIRE(covered.has_value());
  CHECK(covered->under_priced_ns() == 0);
  CHECK(DescribePythonHookCheck(*covered).find("under-corrected") == std::string::npos);
}

TEST_CASE("the sites priced inside callbacks are the callbacks' work, not start-up or the floor",
          "[python_hook_check]") {
  CHECK(PricedInsideCallbacks("python_call@3.12"));
  CHECK(PricedInsideCallbacks("python_transition@3.11"));
  CHECK(PricedInsideCallbacks(kCodeSetupSite));
  CHECK(PricedInsideCallbacks(kThreadSetupSite));
  CHECK(PricedInsideCallbacks(kFlusherWakeSite));
  CHECK_FALSE(PricedInsideCallbacks("python_process@3.12"));
  CHECK_FALSE(PricedInsideCallbacks(kPythonHookFloorSite));
  CHECK_FALSE(PricedInsideCallbacks("cuda_hook"));
  CHECK_FALSE(PricedInsideCallbacks("cupti"));
}
