// rlscope: the command-line entry point; dispatches to subcommands.
#include <iostream>
#include <string>
#include <vector>

#include "collector/calibrate_command.h"
#include "collector/diff_command.h"
#include "collector/dump_command.h"
#include "collector/export_command.h"
#include "collector/huge_page_malloc.h"
#include "collector/launcher.h"
#include "collector/merge_command.h"
#include "collector/python_path_command.h"
#include "collector/report_command.h"
#include "collector/run_command.h"
#include "collector/validate_command.h"

namespace {

constexpr const char* kUsage = R"USAGE(usage: rlscope COMMAND [ARGS...]

rlscope shows where the time of a (deep reinforcement learning) training
program goes: per high-level operation and per level of the software stack,
with no change to the program.

commands:
  run [--out DIR] -- CMD...   profile CMD and print the breakdown
  report DIR                  re-analyse a run directory and print it
  diff DIR_A DIR_B [DIR...]   compare runs side by side (the first is the baseline)
  export DIR --chrome F|--csv F|--folded F   write the run for other tools
  merge DIR DIR [DIR...]      one distributed job's runs on several nodes, as one job
  dump FILE.rlt               print a raw trace file as text (debugging)
  calibrate                   measure rlscope's overhead on this machine (once),
                              so reports can be corrected for it
  validate [-n N] -- CMD...   measure rlscope's overhead on CMD and the correction's bias
  python-path                 print where `import rlscope` is found outside 'rlscope run'

'rlscope COMMAND --help' explains each command.
options: -h/--help, --version
)USAGE";

}  // namespace

int main(int argc, char** argv) {
  // The commands that analyse traces run on huge pages (huge_page_malloc.h);
  // the others start faster without re-executing.
  if (argc > 1) {
    const std::string command = argv[1];
    if (command == "run" || command == "report" || command == "export" || command == "diff" || command == "validate") {
      rlscope::collector::UseHugePageMalloc(argv);
    }
  }
  // Before any command blocks signals of its own: the profiled command
  // gets this mask back.
  rlscope::collector::RememberInheritedSignalMask();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "rlscope " << RLSCOPE_VERSION << "\n";
    return 0;
  }
  if (command == "run") return rlscope::collector::RunCommandMain(rest);
  if (command == "report") return rlscope::collector::ReportCommandMain(rest);
  if (command == "export") return rlscope::collector::ExportCommandMain(rest);
  if (command == "diff") return rlscope::collector::DiffCommandMain(rest);
  if (command == "merge") return rlscope::collector::MergeCommandMain(rest);
  if (command == "dump") return rlscope::collector::DumpCommandMain(rest);
  if (command == "validate") return rlscope::collector::ValidateCommandMain(rest);
  if (command == "calibrate") return rlscope::collector::CalibrateCommandMain(rest);
  if (command == "python-path") return rlscope::collector::PythonPathCommandMain(rest);
  std::cerr << "rlscope: unknown command '" << command << "'\n\n" << kUsage;
  return 2;
}
