#include "collector/python_path_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "collector/run_directory.h"

namespace rlscope::collector {

namespace {

constexpr const char* kPythonPathUsage = R"USAGE(usage: rlscope python-path

Print the folder that holds rlscope's Python module, so that the
annotations of a program (`import rlscope`, `rlscope.operation(...)`) also
work when it runs without rlscope. `rlscope run` makes the module
importable by itself; outside it every function of the module is a no-op,
so the annotations can stay in the code. The folder holds the module only.

For one shell:

  export PYTHONPATH="$(rlscope python-path)${PYTHONPATH:+:$PYTHONPATH}"

For good, a .pth file in the interpreter's site-packages (a virtualenv's or
conda's, whose folder the first command prints; for a system interpreter,
your user's: python3 -m site --user-site, created if missing):

  python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
  rlscope python-path > SITE_PACKAGES/rlscope.pth

options:
  -h, --help  show this help

exit status: 0 printed; 1 the installation has no module folder; 2 usage
error.
)USAGE";

}  // namespace

int PythonPathCommandMain(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--help") {
      std::cout << kPythonPathUsage;
      return 0;
    }
  }
  if (!args.empty()) {
    const std::string message = args[0].rfind('-', 0) == 0 ? absl::StrFormat("unknown option '%s'", args[0])
                                                           : std::string("takes no arguments");
    std::cerr << UsageError("python-path", message).message() << "\n";
    return 2;
  }
  absl::StatusOr<Installation> installation = FindInstallation();
  if (!installation.ok()) {
    std::cerr << "rlscope python-path: " << installation.status().message() << "\n";
    return 1;
  }
  const std::filesystem::path module = std::filesystem::path(installation->module_dir) / "rlscope" / "__init__.py";
  if (access(module.c_str(), R_OK) != 0) {
    std::cerr << "rlscope python-path: cannot read " << module.string() << ": " << strerror(errno)
              << " (it is installed with the rest: `cmake --install`, or built with `ninja`)\n";
    return 1;
  }
  std::cout << installation->module_dir << "\n";
  return 0;
}

}  // namespace rlscope::collector
