// `rlscope calibrate`: measures, once per machine, what each kind of
// rlscope work costs a profiled program (see kCalibrateUsage in the .cc and
// calibration/README.md), and stores it for `rlscope run` to correct with.
#ifndef RLSCOPE_COLLECTOR_CALIBRATE_COMMAND_H_
#define RLSCOPE_COLLECTOR_CALIBRATE_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

// CalibrateCommandMain: `args` are the arguments after "calibrate"; returns
// rlscope's exit code.
int CalibrateCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_CALIBRATE_COMMAND_H_
