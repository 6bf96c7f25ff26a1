// `rlscope validate [-n N] [--warmup K] [--out DIR] [OPTIONS] -- COMMAND...`:
// runs COMMAND unprofiled and profiled N times, interleaved, and reports
// the raw overhead (profiled / unprofiled wall time) and the bias of the
// corrected total ((corrected - unprofiled) / unprofiled), each with its
// spread. See kValidateUsage in validate_command.cc.
#ifndef RLSCOPE_COLLECTOR_VALIDATE_COMMAND_H_
#define RLSCOPE_COLLECTOR_VALIDATE_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

// ValidateCommandMain: `args` are the arguments after "validate".
int ValidateCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_VALIDATE_COMMAND_H_
