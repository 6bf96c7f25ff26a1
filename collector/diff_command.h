// `rlscope diff A B [C ...]`: analysed runs side by side (run_diff.h).
#ifndef RLSCOPE_COLLECTOR_DIFF_COMMAND_H_
#define RLSCOPE_COLLECTOR_DIFF_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

// DiffCommandMain: `args` are the arguments after "diff".
int DiffCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_DIFF_COMMAND_H_
