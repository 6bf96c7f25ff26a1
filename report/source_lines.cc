#include "report/source_lines.h"

#include <filesystem>
#include <sstream>

#include "absl/strings/ascii.h"
#include "format/input_file.h"

namespace rlscope::report {

CodeLocation SplitCodeLocation(const std::string& location) {
  const size_t open = location.rfind(" (");
  const size_t colon = location.rfind(':');
  if (open == std::string::npos || colon == std::string::npos || colon < open + 2) return {location, ""};
  return {location.substr(0, open), location.substr(open + 2, colon - open - 2)};
}

std::string SourceLines::DisplayPath(const std::string& file) const {
  if (working_directory_.empty() || file.empty() || file[0] != '/') return file;
  std::string prefix = working_directory_;
  if (prefix.back() != '/') prefix += '/';
  return file.rfind(prefix, 0) == 0 ? file.substr(prefix.size()) : file;
}

std::string SourceLines::Text(const std::string& file, uint32_t line) {
  if (file.empty() || file[0] == '<' || line == 0) return "";  // "<string>", "<stdin>": no file.
  auto [it, inserted] = files_.try_emplace(file);
  if (inserted) {
    std::filesystem::path path(file);
    if (path.is_relative() && !working_directory_.empty()) path = std::filesystem::path(working_directory_) / path;
    std::string content, error;
    if (ReadInputFile(path.string(), kMaxSourceFileBytes, Symlinks::kFollow, &content, &error)) {
      std::istringstream lines(content);
      std::string text;
      while (std::getline(lines, text)) it->second.push_back(std::move(text));
    }
  }
  const std::vector<std::string>& lines = it->second;
  if (line > lines.size()) return "";
  std::string text(absl::StripAsciiWhitespace(lines[line - 1]));
  if (text.size() > kMaxTextChars) text = text.substr(0, kMaxTextChars - 3) + "...";
  return text;
}

}  // namespace rlscope::report
