#include "format/glob_set.h"

#include <utility>

#include "format/glob_match.h"

namespace rlscope {

namespace {

// LiteralRuns: the [begin, end) runs of literal bytes of one glob, in
// order, and whether the glob starts and ends with one. False when
// GlobMatch would hand the glob to fnmatch (NeedsFnmatch: a backslash, a
// byte outside ASCII, a special or unclosed bracket): then no literal is
// used.
struct Runs {
  std::vector<std::pair<size_t, size_t>> runs;
  bool starts_literal = false;
  bool ends_literal = false;
};

bool LiteralRuns(std::string_view glob, Runs& out) {
  if (NeedsFnmatch(glob, "")) return false;
  size_t run_begin = 0;
  bool in_run = false;
  auto close_run = [&](size_t end) {
    if (in_run && end > run_begin) out.runs.emplace_back(run_begin, end);
    in_run = false;
  };
  for (size_t i = 0; i < glob.size();) {
    const char c = glob[i];
    if (c == '*' || c == '?' || c == '[') {
      close_run(i);
      // Closed: NeedsFnmatch took the unclosed ones.
      i = c == '[' ? BracketEnd(glob, i) : i + 1;
      continue;
    }
    if (!in_run) {
      in_run = true;
      run_begin = i;
    }
    ++i;
  }
  close_run(glob.size());
  out.starts_literal = !out.runs.empty() && out.runs.front().first == 0;
  out.ends_literal = !out.runs.empty() && out.runs.back().second == glob.size();
  return true;
}

}  // namespace

GlobSet::GlobSet(std::string globs) : text_(std::move(globs)) {
  size_t begin = 0;
  while (begin <= text_.size()) {
    size_t end = text_.find('|', begin);
    if (end == std::string::npos) end = text_.size();
    if (end > begin) {
      Alternative alternative;
      alternative.begin = begin;
      alternative.size = end - begin;
      Runs runs;
      if (LiteralRuns(Part(begin, end - begin), runs)) {
        if (runs.starts_literal) {
          alternative.prefix_begin = begin + runs.runs.front().first;
          alternative.prefix_size = runs.runs.front().second - runs.runs.front().first;
        }
        if (runs.ends_literal) {
          alternative.suffix_begin = begin + runs.runs.back().first;
          alternative.suffix_size = runs.runs.back().second - runs.runs.back().first;
        }
        for (const auto& [run_begin, run_end] : runs.runs) {
          if (run_end - run_begin > alternative.inner_size) {
            alternative.inner_begin = begin + run_begin;
            alternative.inner_size = run_end - run_begin;
          }
        }
      }
      alternatives_.push_back(alternative);
    }
    begin = end + 1;
  }
}

bool GlobSet::Matches(std::string_view name) const {
  for (const Alternative& alternative : alternatives_) {
    if (name.size() < alternative.prefix_size || name.size() < alternative.suffix_size) continue;
    if (name.substr(0, alternative.prefix_size) != Part(alternative.prefix_begin, alternative.prefix_size)) continue;
    if (name.substr(name.size() - alternative.suffix_size) != Part(alternative.suffix_begin, alternative.suffix_size)) {
      continue;
    }
    if (alternative.inner_size > 0 && name.find(Part(alternative.inner_begin, alternative.inner_size)) == name.npos) {
      continue;
    }
    if (GlobMatch(Part(alternative.begin, alternative.size), name)) return true;
  }
  return false;
}

}  // namespace rlscope
