#ifndef RLSCOPE_REPORT_NAME_VERDICTS_H_
#define RLSCOPE_REPORT_NAME_VERDICTS_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "report/process_timeline.h"

namespace rlscope::report {

// NameVerdicts: a yes/no question about a name (is this CUDA function one
// that waits for the GPU? is this kernel a collective's?), answered once
// per name label. A run holds millions of calls and kernels but few
// distinct names, so the question, a string match, is asked once a name,
// not once an event. kNoLabel (no name) is always "no".
class NameVerdicts {
 public:
  using Question = bool (*)(std::string_view name);

  NameVerdicts(const NameTable& names, Question question) : names_(names), question_(question) {}

  bool Of(int32_t label) {
    if (label == kNoLabel) return false;
    const auto [it, added] = verdicts_.try_emplace(label, false);
    if (added) it->second = question_(names_.Name(label));
    return it->second;
  }

 private:
  const NameTable& names_;
  Question question_;
  absl::flat_hash_map<int32_t, bool> verdicts_;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_NAME_VERDICTS_H_
