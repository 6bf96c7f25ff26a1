// How the commands read their arguments (cli_args.h): options and the one
// way counts are parsed.
#include "collector/cli_args.h"

#include <catch2/catch.hpp>

namespace rlscope::collector {
namespace {

TEST_CASE("A whole number is decimal digits within its bounds", "[cli]") {
  CHECK(ParseWholeNumber("0", 0, 10) == 0);
  CHECK(ParseWholeNumber("10", 0, 10) == 10);
  CHECK(ParseWholeNumber("007", 0, 10) == 7);
  CHECK(ParseWholeNumber("999999999999999999", 0, INT64_MAX) == 999999999999999999);
  for (const char* bad : {"", "11", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "two", "9999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(ParseWholeNumber(bad, 0, 10).has_value());
  }
  CHECK_FALSE(ParseWholeNumber("1", 2, 100).has_value());
}

TEST_CASE("A count option's value is taken inline or next, and errors name the option", "[cli]") {
  ArgCursor cursor({"--top=5", "-n", "3", "--repetitions", "1", "--warmup"});
  ParsedOption option = cursor.TakeOption();
  CHECK(TakeWholeNumber("diff", option, cursor, 0).value() == 5);
  option = cursor.TakeOption();
  CHECK(TakeWholeNumber("validate", option, cursor, 1, 10000).value() == 3);
  option = cursor.TakeOption();
  absl::StatusOr<int64_t> refused = TakeWholeNumber("calibrate", option, cursor, 2, 100);
  REQUIRE_FALSE(refused.ok());
  CHECK(
      refused.status().message() ==
      "rlscope calibrate: --repetitions wants a whole number from 2 to 100, not '1' (see 'rlscope calibrate --help')");
  option = cursor.TakeOption();
  refused = TakeWholeNumber("validate", option, cursor, 0);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        "rlscope validate: option --warmup needs a value (see 'rlscope validate --help')");
}

}  // namespace
}  // namespace rlscope::collector
