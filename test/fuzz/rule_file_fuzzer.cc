// libFuzzer target: arbitrary text as a rules file (--rules FILE, DIR/rules/),
// through the parser both the preload and the report use, then each glob
// matched once. It must end in rules or one "FILE:LINE: ..." error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format/rule_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rlscope::RuleSet rules;
  std::string error;
  rlscope::ParseRules(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.rules", rules, &error);
  for (const rlscope::OperationRule& rule : rules.operations) {
    rule.qualname_glob.Matches("Env.step");
    rlscope::MatchesLocation(rule, "/v/site-packages/torch/optim/adam.py", "torch.optim.adam");
  }
  for (const rlscope::LibraryRule& rule : rules.libraries) {
    rlscope::MatchesGlob(rule.path_glob, "/usr/lib/libtorch.so");
    rlscope::MatchesGlob(rule.package_glob, "torch");
    rlscope::MatchesGlob(rule.lib_glob, "libtorch.so");
  }
  return 0;
}
