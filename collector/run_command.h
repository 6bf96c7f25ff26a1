// `rlscope run [--out DIR] -- COMMAND...`: see kRunUsage in run_command.cc.
#ifndef RLSCOPE_COLLECTOR_RUN_COMMAND_H_
#define RLSCOPE_COLLECTOR_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

// RunCommandMain: `args` are the arguments after "run"; returns the exit
// code rlscope should end with.
int RunCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_RUN_COMMAND_H_
