// The glob tests' differential check: random patterns and texts over small
// alphabets of the special characters, decided by a matcher and by its
// reference.
#ifndef RLSCOPE_TEST_FORMAT_GLOB_DIFFERENTIAL_H_
#define RLSCOPE_TEST_FORMAT_GLOB_DIFFERENTIAL_H_

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace rlscope::test {

struct GlobAlphabets {
  std::string pattern;
  size_t pattern_length = 0;
  std::string text;
  size_t text_length = 0;
};

// Disagreements: of `count` random (pattern, text) pairs, how many
// `matcher` and `reference` decide differently (the first ten are logged).
template <typename Matcher, typename Reference>
int Disagreements(unsigned seed, int count, const GlobAlphabets& alphabets, Matcher&& matcher, Reference&& reference) {
  std::mt19937 random(seed);
  auto draw = [&](const std::string& alphabet, size_t max_length) {
    std::string out(random() % (max_length + 1), ' ');
    for (char& c : out) c = alphabet[random() % alphabet.size()];
    return out;
  };
  int disagreements = 0;
  for (int i = 0; i < count; ++i) {
    const std::string pattern = draw(alphabets.pattern, alphabets.pattern_length);
    const std::string text = draw(alphabets.text, alphabets.text_length);
    const bool expected = reference(pattern, text);
    if (matcher(pattern, text) != expected && ++disagreements <= 10) {
      UNSCOPED_INFO("pattern '" << pattern << "' text '" << text << "': the reference says " << expected);
    }
  }
  return disagreements;
}

}  // namespace rlscope::test

#endif  // RLSCOPE_TEST_FORMAT_GLOB_DIFFERENTIAL_H_
