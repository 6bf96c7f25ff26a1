// GlobSet: a rule's '|'-separated shell globs, prepared once so that the
// many names they never match are told apart without a glob match. Each
// alternative keeps the literal text a match needs: its literal prefix
// (before the first '*', '?' or bracket), its literal suffix (after the
// last), and its longest literal run anywhere; a name lacking one of them
// cannot match, and comparing bytes is cheaper than GlobMatch. A code
// object's set-up matches its qualified name against every rule's globs
// (thousands of code objects per import of torch, dozens of alternatives
// each), and most alternatives fail on a literal.
//
// Matches gives exactly what GlobMatch gives for some alternative (a test
// compares them on random patterns). An alternative with a backslash or a
// byte outside ASCII (where fnmatch's reading is not byte by byte) keeps
// no literals and is always matched in full.
#ifndef RLSCOPE_FORMAT_GLOB_SET_H_
#define RLSCOPE_FORMAT_GLOB_SET_H_

#include <string>
#include <string_view>
#include <vector>

namespace rlscope {

class GlobSet {
 public:
  GlobSet() = default;
  explicit GlobSet(std::string globs);
  // Copies and moves are member-wise: the alternatives hold offsets into
  // text_, which stay valid in the copy.

  // Matches: whether `name` matches one of the alternatives (an empty
  // alternative matches nothing, as in MatchesGlob).
  bool Matches(std::string_view name) const;
  // text: the globs as written.
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }

 private:
  struct Alternative {
    size_t begin = 0, size = 0;  // The glob, in text_.
    // Literals a matching name holds, as offsets into text_ (views would
    // dangle when the set is moved).
    size_t prefix_begin = 0, prefix_size = 0;
    size_t suffix_begin = 0, suffix_size = 0;
    size_t inner_begin = 0, inner_size = 0;
  };
  std::string_view Part(size_t begin, size_t size) const { return std::string_view(text_).substr(begin, size); }

  std::string text_;
  std::vector<Alternative> alternatives_;
};

}  // namespace rlscope

#endif  // RLSCOPE_FORMAT_GLOB_SET_H_
