#include "cli_args.h"

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

absl::Status UsageError(const std::string& command, const std::string& message) {
  return absl::InvalidArgumentError(
      absl::StrFormat("rlscope %s: %s (see 'rlscope %s --help')", command, message, command));
}

}  // namespace rlscope::collector
