// `rlscope export DIR --chrome FILE | --perfetto FILE | --csv FILE | --folded FILE | --sqlite FILE`: a run
// directory's data in formats other tools read (report/export_*.h).
#ifndef RLSCOPE_COLLECTOR_EXPORT_COMMAND_H_
#define RLSCOPE_COLLECTOR_EXPORT_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

// ExportCommandMain: `args` are the arguments after "export".
int ExportCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_EXPORT_COMMAND_H_
