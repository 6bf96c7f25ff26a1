// GlobMatch: whether `text` matches one shell glob, as fnmatch(pattern,
// text, 0) decides, without its cost. Rules are matched against every code
// object the first time it runs (thousands of globs per import of torch),
// and glibc's fnmatch converts both strings to wide characters on every
// call in a UTF-8 locale: it was most of a code object's set-up (measured
// with perf on the bundled dqn.py: fnmatch and its conversions under
// MatchesGlob, 3.5 % of the run's samples).
//
// Handled here, byte by byte: '*', '?', bracket expressions with ranges
// and '!'/'^' negation, and a literal ']' first in a bracket. Anything else
// fnmatch gives meaning to - a backslash escape, character classes
// ("[:alpha:]"), equivalence classes, collating symbols, an unclosed '['
// - or a byte outside ASCII in either string (where fnmatch counts
// characters, not bytes) goes to fnmatch itself, so results never differ
// (a differential test against fnmatch checks 200,000 random patterns).
#ifndef RLSCOPE_PRELOAD_GLOB_MATCH_H_
#define RLSCOPE_PRELOAD_GLOB_MATCH_H_

#include <cstddef>
#include <string_view>

namespace rlscope {

bool GlobMatch(std::string_view pattern, std::string_view text);

// NeedsFnmatch: whether GlobMatch hands (pattern, text) to fnmatch, i.e.
// whether either holds something it does not read byte by byte. With an
// empty text: whether the pattern alone does.
bool NeedsFnmatch(std::string_view pattern, std::string_view text);

// BracketEnd: the index just past the ']' closing the bracket expression
// that starts at pattern[open] ('['), or npos when it is not closed.
size_t BracketEnd(std::string_view pattern, size_t open);

}  // namespace rlscope

#endif  // RLSCOPE_PRELOAD_GLOB_MATCH_H_
