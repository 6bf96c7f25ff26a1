// When `rlscope run` decodes the trace during the run (collector/live_decoding.h).
#include "collector/live_decoding.h"

#include <catch2/catch.hpp>

namespace rlscope::collector {
namespace {

TEST_CASE("Decoding during the run: the variable decides, else 4 CPUs or more", "[live_decoding]") {
  CHECK(ShouldDecodeDuringRun(nullptr, 4));
  CHECK(ShouldDecodeDuringRun(nullptr, 16));
  CHECK_FALSE(ShouldDecodeDuringRun(nullptr, 2));
  CHECK_FALSE(ShouldDecodeDuringRun(nullptr, 3));
  CHECK(ShouldDecodeDuringRun("1", 2));
  CHECK_FALSE(ShouldDecodeDuringRun("0", 16));
  // Anything else is as unset.
  CHECK(ShouldDecodeDuringRun("yes", 8));
  CHECK_FALSE(ShouldDecodeDuringRun("", 2));
  CHECK(UsableCpus() >= 1);
}

}  // namespace
}  // namespace rlscope::collector
