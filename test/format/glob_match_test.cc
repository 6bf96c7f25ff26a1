#include "format/glob_match.h"

#include <fnmatch.h>

#include <catch2/catch.hpp>
#include <string>

#include "test/format/glob_differential.h"

using rlscope::GlobMatch;

TEST_CASE("glob: the shapes the rules use", "[glob]") {
  CHECK(GlobMatch("*.step", "CartPoleEnv.step"));
  CHECK_FALSE(GlobMatch("*.step", "CartPoleEnv.step_async"));
  CHECK(GlobMatch("*.[!_]*", "Agent.get_action"));
  CHECK_FALSE(GlobMatch("*.[!_]*", "Agent._private"));
  CHECK(GlobMatch("Module.apply", "Module.apply"));
  CHECK_FALSE(GlobMatch("Module.apply", "Module.apply2"));
  CHECK(GlobMatch("*/torch/*", "/opt/torch/.venv/lib/x.py"));  // '*' spans '/', as fnmatch without flags.
  CHECK(GlobMatch("grad.<locals>.*", "grad.<locals>.grad_f"));
  CHECK(GlobMatch("?", "a"));
  CHECK_FALSE(GlobMatch("?", ""));
  CHECK(GlobMatch("", ""));
  CHECK_FALSE(GlobMatch("", "a"));
  CHECK(GlobMatch("[]a]", "]"));  // A ']' first in a bracket is literal.
  CHECK(GlobMatch("[a", "[a"));   // An unclosed "[" is literal (through fnmatch).
}

TEST_CASE("glob: what fnmatch gives meaning to beyond that goes to fnmatch", "[glob]") {
  CHECK(GlobMatch("a\\*", "a*"));
  CHECK_FALSE(GlobMatch("a\\*", "ab"));
  CHECK(GlobMatch("[[:digit:]]x", "7x"));
  CHECK(GlobMatch("caf\xc3\xa9", "caf\xc3\xa9"));
}

// Differential: every pattern and text over an alphabet of the special
// characters decides as fnmatch(pattern, text, 0) does (C locale).
TEST_CASE("glob: random patterns decide exactly as fnmatch", "[glob]") {
  const rlscope::test::GlobAlphabets alphabets{"ab.*?[]!^-", 7, "ab.[]!^-", 6};
  CHECK(rlscope::test::Disagreements(
            12345, 200000, alphabets,
            [](const std::string& pattern, const std::string& text) { return GlobMatch(pattern, text); },
            [](const std::string& pattern, const std::string& text) {
              return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
            }) == 0);
}
