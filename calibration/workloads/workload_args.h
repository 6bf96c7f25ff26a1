// WorkloadArgs: the command line of the native calibration workloads
// (README.md here):
//   --case NAME --iterations N [--burst B [--pause-ms P]] | --list [| --info]
#ifndef RLSCOPE_CALIBRATION_WORKLOADS_WORKLOAD_ARGS_H_
#define RLSCOPE_CALIBRATION_WORKLOADS_WORKLOAD_ARGS_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace rlscope::calibration {

struct WorkloadArgs {
  std::string case_name;
  int64_t iterations = -1;  // -1: not given.
  bool list = false;
  bool info = false;
  bool help = false;
  int64_t burst = 0;      // Iterations per burst; 0: one loop.
  int64_t pause_ms = 25;  // Untimed, before each burst: longer than the flusher's period (20 ms).
};

// ParseWorkloadArgs: "" when the arguments are well formed, else what is
// wrong (for the usage message). --info is accepted only with `accept_info`.
inline std::string ParseWorkloadArgs(int argc, char** argv, bool accept_info, WorkloadArgs& args) {
  auto count = [](const char* text, int64_t* value) {
    char* end = nullptr;
    errno = 0;
    *value = strtoll(text, &end, 10);
    return errno == 0 && *end == '\0' && *value >= 0 && *value <= 1000000000000;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--list") {
      args.list = true;
    } else if (arg == "--info" && accept_info) {
      args.info = true;
    } else if (arg == "-h" || arg == "--help") {
      args.help = true;
    } else if (arg == "--case" && has_value) {
      args.case_name = argv[++i];
    } else if ((arg == "--iterations" || arg == "--burst" || arg == "--pause-ms") && has_value) {
      int64_t* target = arg == "--iterations" ? &args.iterations : arg == "--burst" ? &args.burst : &args.pause_ms;
      if (!count(argv[++i], target)) return std::string(arg) + " wants a count >= 0";
    } else {
      return "unexpected argument '" + std::string(arg) + "'";
    }
  }
  return "";
}

// UsageError: "PROGRAM: problem" and `usage` on stderr; returns exit code 2.
inline int UsageError(const char* program, const char* usage, const std::string& problem) {
  fprintf(stderr, "%s: %s\n%s", program, problem.c_str(), usage);
  return 2;
}

// ParseOrExit: parses into `args`; on --help prints `usage` (exit 0), on a
// malformed line "PROGRAM: problem" and `usage` (exit 2). Returns the exit
// code when the program is to stop, nullopt when it is to run.
inline std::optional<int> ParseOrExit(int argc, char** argv, bool accept_info, const char* program, const char* usage,
                                      WorkloadArgs& args) {
  if (const std::string problem = ParseWorkloadArgs(argc, argv, accept_info, args); !problem.empty()) {
    return UsageError(program, usage, problem);
  }
  if (args.help) {
    fputs(usage, stdout);
    return 0;
  }
  return std::nullopt;
}

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_WORKLOADS_WORKLOAD_ARGS_H_
