// SourceLines: how the report shows a line of the user's own code: its file
// relative to the run's working directory (when under it) and the line's
// text, read after the run from the file on disk. Best effort: a file that
// is gone, unreadable or over kMaxSourceFileBytes shows no text, and one
// edited since the run may show another line's (the report cannot know).
#ifndef RLSCOPE_REPORT_SOURCE_LINES_H_
#define RLSCOPE_REPORT_SOURCE_LINES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace rlscope::report {

// A Python code location "qualname (file:firstline)", split.
struct CodeLocation {
  std::string function;  // co_qualname.
  std::string file;      // co_filename, as Python had it.
};
CodeLocation SplitCodeLocation(const std::string& location);

class SourceLines {
 public:
  static constexpr size_t kMaxSourceFileBytes = 8u << 20;
  static constexpr size_t kMaxTextChars = 160;

  explicit SourceLines(std::string working_directory) : working_directory_(std::move(working_directory)) {}

  // DisplayPath: `file` relative to the working directory when inside it,
  // else as it is.
  std::string DisplayPath(const std::string& file) const;
  // Text: line `line` (1-based) of `file` without surrounding white space,
  // cut at kMaxTextChars; "" when unknown. Each file is read once.
  std::string Text(const std::string& file, uint32_t line);

 private:
  std::string working_directory_;
  absl::flat_hash_map<std::string, std::vector<std::string>> files_;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_SOURCE_LINES_H_
