// `rlscope python-path`: prints the folder that holds rlscope's Python
// module alone, so `import rlscope` works outside `rlscope run` too (where
// every function of the module is a no-op).
#ifndef RLSCOPE_COLLECTOR_PYTHON_PATH_COMMAND_H_
#define RLSCOPE_COLLECTOR_PYTHON_PATH_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

int PythonPathCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_PYTHON_PATH_COMMAND_H_
