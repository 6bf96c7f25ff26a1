// GlobSet's literal checks only ever skip alternatives that could not
// match: it decides as MatchesGlob (GlobMatch per '|'-alternative) does.
#include "format/glob_set.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "format/rule_file.h"
#include "test/format/glob_differential.h"

using rlscope::GlobSet;

TEST_CASE("glob set: the shapes the default rules use", "[glob]") {
  const GlobSet updates("*Agent*.update|*DQN*.update|update|train_step|*.train_step");
  CHECK(updates.Matches("MyAgent.update"));
  CHECK(updates.Matches("DQN.update"));
  CHECK(updates.Matches("update"));
  CHECK(updates.Matches("Learner.train_step"));
  CHECK_FALSE(updates.Matches("Agent.updater"));
  CHECK_FALSE(updates.Matches("update_target"));
  CHECK_FALSE(updates.Matches(""));
  const GlobSet methods("*.[!_]*");
  CHECK(methods.Matches("Buffer.add"));
  CHECK_FALSE(methods.Matches("Buffer._grow"));
  CHECK_FALSE(methods.Matches("add"));
  CHECK(GlobSet("Module._call_impl|Module.__call__").Matches("Module.__call__"));
  CHECK(GlobSet("a\\*|x").Matches("a*"));  // A backslash: matched in full, no literal check.
  CHECK_FALSE(GlobSet("").Matches(""));    // No alternative matches nothing, as MatchesGlob.
  CHECK_FALSE(GlobSet("|").Matches(""));
  GlobSet assigned;
  assigned = updates;  // Copy assignment prepares the literals again, from the text.
  CHECK(assigned.Matches("MyAgent.update"));
  CHECK(assigned.text() == updates.text());
  const std::vector<GlobSet> copies(2, updates);  // Copy construction.
  CHECK(copies[1].Matches("DQN.update"));
  CHECK_FALSE(copies[1].Matches("Agent.updater"));
}

// Differential: random '|'-alternatives over the special characters decide
// as MatchesGlob does.
TEST_CASE("glob set: random patterns decide exactly as MatchesGlob", "[glob]") {
  const rlscope::test::GlobAlphabets alphabets{"ab.*?[]!^-|\\", 9, "ab.[]!^-*\\", 6};
  CHECK(rlscope::test::Disagreements(
            2026, 200000, alphabets,
            [](const std::string& pattern, const std::string& text) { return GlobSet(pattern).Matches(text); },
            [](const std::string& pattern, const std::string& text) {
              return rlscope::MatchesGlob(pattern, text.c_str());
            }) == 0);
}
