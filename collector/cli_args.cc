#include "collector/cli_args.h"

#include "absl/strings/str_format.h"

namespace rlscope::collector {

bool ArgCursor::AtOption() const {
  if (AtEnd()) return false;
  const std::string& arg = Peek();
  return arg.size() > 1 && arg[0] == '-' && arg != "--";
}

ParsedOption ArgCursor::TakeOption() {
  std::string arg = Take();
  const size_t equals = arg.find('=');
  if (arg.rfind("--", 0) == 0 && equals != std::string::npos) {
    return {arg.substr(0, equals), arg.substr(equals + 1)};
  }
  return {arg, std::nullopt};
}

absl::StatusOr<std::string> ArgCursor::TakeValue(const ParsedOption& option) {
  if (option.inline_value) return *option.inline_value;
  if (AtEnd()) return absl::InvalidArgumentError(absl::StrFormat("option %s needs a value", option.name));
  return Take();
}

std::vector<std::string> ArgCursor::TakeRest() {
  std::vector<std::string> rest(args_.begin() + static_cast<std::ptrdiff_t>(next_), args_.end());
  next_ = args_.size();
  return rest;
}

bool ArgCursor::NextOption(std::vector<std::string>& operands) {
  while (!AtEnd()) {
    if (AtOption()) return true;
    if (AtSeparator()) {
      Take();
      for (std::string& operand : TakeRest()) operands.push_back(std::move(operand));
      return false;
    }
    operands.push_back(Take());
  }
  return false;
}

std::optional<int64_t> ParseWholeNumber(const std::string& text, int64_t minimum, int64_t maximum) {
  if (text.empty() || text.size() > 18) return std::nullopt;  // 18 digits fit an int64_t.
  int64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    number = number * 10 + (c - '0');
  }
  if (number < minimum || number > maximum) return std::nullopt;
  return number;
}

absl::StatusOr<int64_t> TakeWholeNumber(const std::string& command, const ParsedOption& option, ArgCursor& cursor,
                                        int64_t minimum, int64_t maximum) {
  absl::StatusOr<std::string> value = cursor.TakeValue(option);
  if (!value.ok()) return UsageError(command, std::string(value.status().message()));
  if (std::optional<int64_t> number = ParseWholeNumber(*value, minimum, maximum)) return *number;
  return UsageError(command, WholeNumberProblem(option.name, *value, minimum, maximum));
}

std::string WholeNumberProblem(const std::string& option, const std::string& value, int64_t minimum, int64_t maximum) {
  const std::string bounds =
      maximum == INT64_MAX ? absl::StrFormat(">= %d", minimum) : absl::StrFormat("from %d to %d", minimum, maximum);
  return absl::StrFormat("%s wants a whole number %s, not '%s'", option, bounds, value);
}

absl::Status UsageError(const std::string& command, const std::string& message) {
  return absl::InvalidArgumentError(
      absl::StrFormat("rlscope %s: %s (see 'rlscope %s --help')", command, message, command));
}

}  // namespace rlscope::collector
