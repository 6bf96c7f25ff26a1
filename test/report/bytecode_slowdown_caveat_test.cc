#include "report/bytecode_slowdown_caveat.h"

#include <catch2/catch.hpp>

using namespace rlscope::report;

TEST_CASE("Python 3.11's calls carry the caveat of its bytecode slowdown", "[bytecode_slowdown_caveat]") {
  ProcessCorrection correction;
  correction.by_site["python_call@3.12"] = {1000, 60'000, 0};
  CHECK_FALSE(BytecodeSlowdownCaveat(correction).has_value());  // 3.12: no slowdown to caveat.
  correction.by_site["python_call@3.11"] = {0, 0, 0};
  CHECK_FALSE(BytecodeSlowdownCaveat(correction).has_value());  // Priced, but no call seen.
  correction.by_site["python_call@3.11"] = {5000, 800'000, 0};
  const auto caveat = BytecodeSlowdownCaveat(correction);
  REQUIRE(caveat.has_value());
  CHECK_THAT(*caveat,
             Catch::Contains("Python 3.11") && Catch::Contains("under-corrected") && Catch::Contains("over-corrected"));
}
