// How the launcher hands rule files to the preload (rule_file.h): one
// variable per file, else the older ':'-separated RLSCOPE_RULES.
#include "rule_file.h"

#include <catch2/catch.hpp>
#include <stdlib.h>

#include <string>
#include <vector>

using rlscope::RuleFilesFromEnvironment;

TEST_CASE("Rule files travel one variable each so a path may hold a colon", "[rules]") {
  setenv("RLSCOPE_RULES_COUNT", "2", 1);
  setenv("RLSCOPE_RULES_0", "/a/default.rules", 1);
  setenv("RLSCOPE_RULES_1", "/runs/12:00/mine.rules", 1);
  setenv("RLSCOPE_RULES_2", "/stale/from-an-outer-run.rules", 1);
  setenv("RLSCOPE_RULES", "/ignored.rules", 1);
  CHECK(RuleFilesFromEnvironment() == std::vector<std::string>{"/a/default.rules", "/runs/12:00/mine.rules"});
  // Without the count (an environment set by hand): the older form.
  unsetenv("RLSCOPE_RULES_COUNT");
  setenv("RLSCOPE_RULES", "/x.rules:/y.rules", 1);
  CHECK(RuleFilesFromEnvironment() == std::vector<std::string>{"/x.rules", "/y.rules"});
  for (const char* name : {"RLSCOPE_RULES", "RLSCOPE_RULES_0", "RLSCOPE_RULES_1", "RLSCOPE_RULES_2"}) unsetenv(name);
  CHECK(RuleFilesFromEnvironment().empty());
}
