// `rlscope dump FILE.rlt`: prints a trace file's frames and events as text,
// one line each, for debugging rlscope and inspecting raw data.
#ifndef RLSCOPE_COLLECTOR_DUMP_COMMAND_H_
#define RLSCOPE_COLLECTOR_DUMP_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

int DumpCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_DUMP_COMMAND_H_
