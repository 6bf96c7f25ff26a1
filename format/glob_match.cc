#include "format/glob_match.h"

#include <fnmatch.h>

#include <string>

namespace rlscope {

size_t BracketEnd(std::string_view pattern, size_t open) {
  size_t i = open + 1;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) ++i;
  if (i < pattern.size() && pattern[i] == ']') ++i;  // A ']' first is literal.
  while (i < pattern.size() && pattern[i] != ']') ++i;
  return i < pattern.size() ? i + 1 : std::string_view::npos;
}

bool NeedsFnmatch(std::string_view pattern, std::string_view text) {
  for (unsigned char c : text) {
    if (c >= 0x80) return true;
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    const unsigned char c = pattern[i];
    if (c >= 0x80 || c == '\\' || c == '\0') return true;
    if (c == '[') {
      // Classes, equivalences, collating symbols; and an unclosed '['
      // (glibc's reading of one depends on what follows it).
      if (i + 1 < pattern.size() && (pattern[i + 1] == ':' || pattern[i + 1] == '=' || pattern[i + 1] == '.')) {
        return true;
      }
      if (BracketEnd(pattern, i) == std::string_view::npos) return true;
    }
  }
  return false;
}

namespace {

// InBracket: whether `c` is in the bracket expression pattern[open, end).
bool InBracket(std::string_view pattern, size_t open, size_t end, unsigned char c) {
  size_t i = open + 1;
  bool negated = false;
  if (pattern[i] == '!' || pattern[i] == '^') {
    negated = true;
    ++i;
  }
  bool found = false;
  const size_t close = end - 1;
  for (bool first = true; i < close; first = false) {
    const unsigned char low = pattern[i];
    if (low == ']' && !first) break;
    if (i + 2 < close && pattern[i + 1] == '-') {
      const unsigned char high = pattern[i + 2];
      if (low <= c && c <= high) found = true;
      i += 3;
    } else {
      if (low == c) found = true;
      ++i;
    }
  }
  return found != negated;
}

// Ascii: the match, with backtracking to the last '*' only (a '*' can
// always absorb one more character, so earlier ones need no revisit).
bool Ascii(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        star = p++;
        star_text = t;
        continue;
      }
      if (c == '?') {
        ++p;
        ++t;
        continue;
      }
      if (c == '[') {
        const size_t end = BracketEnd(pattern, p);  // Closed: NeedsFnmatch took the others.
        if (InBracket(pattern, p, end, static_cast<unsigned char>(text[t]))) {
          p = end;
          ++t;
          continue;
        }
      } else if (c == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text) {
  if (NeedsFnmatch(pattern, text)) {
    return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
  }
  return Ascii(pattern, text);
}

}  // namespace rlscope
