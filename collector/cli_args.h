// ArgCursor: walks a subcommand's arguments. Options may be written
// "--name VALUE" or "--name=VALUE"; "--" ends the options. Usage errors are
// returned as InvalidArgument statuses with a message naming the culprit.
#ifndef RLSCOPE_COLLECTOR_CLI_ARGS_H_
#define RLSCOPE_COLLECTOR_CLI_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rlscope::collector {

struct ParsedOption {
  std::string name;                         // "--out"
  std::optional<std::string> inline_value;  // From "--out=DIR".
};

class ArgCursor {
 public:
  explicit ArgCursor(std::vector<std::string> args) : args_(std::move(args)) {}

  bool AtEnd() const { return next_ >= args_.size(); }
  const std::string& Peek() const { return args_[next_]; }
  // AtOption: "-x" or "--xyz" (but not "-" or "--").
  bool AtOption() const;
  bool AtSeparator() const { return !AtEnd() && Peek() == "--"; }
  std::string Take() { return args_[next_++]; }
  ParsedOption TakeOption();
  // TakeValue: the option's value, inline or the next argument.
  absl::StatusOr<std::string> TakeValue(const ParsedOption& option);
  std::vector<std::string> TakeRest();
  // NextOption: for commands whose options and operands mix: moves the
  // operands up to the next option into `operands` (all that follows a
  // "--" too) and says whether an option is next (TakeOption takes it).
  bool NextOption(std::vector<std::string>& operands);

 private:
  std::vector<std::string> args_;
  size_t next_ = 0;
};

// TakeWholeNumber: the option's value as a whole number from `minimum` to
// `maximum` (decimal digits only: no sign, space or fraction), or a usage
// error of `command` naming the option, its bounds and what was given.
// The one way the commands read a count.
absl::StatusOr<int64_t> TakeWholeNumber(const std::string& command, const ParsedOption& option, ArgCursor& cursor,
                                        int64_t minimum, int64_t maximum = INT64_MAX);

// ParseWholeNumber: `text` as such a number, or nullopt.
std::optional<int64_t> ParseWholeNumber(const std::string& text, int64_t minimum, int64_t maximum);
// WholeNumberProblem: the message for `value` given to `option` outside
// them ("--top wants a whole number >= 0, not 'x'").
std::string WholeNumberProblem(const std::string& option, const std::string& value, int64_t minimum,
                               int64_t maximum = INT64_MAX);

// UsageError: "rlscope <command>: <message> (see rlscope <command> --help)".
absl::Status UsageError(const std::string& command, const std::string& message);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_CLI_ARGS_H_
