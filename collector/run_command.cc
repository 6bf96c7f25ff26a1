// `rlscope run`: profile a command. Starts the receiver, launches the
// command with the preload injected, forwards signals, waits for the
// command and for its processes' last events, then writes and prints the
// report. Exits with the command's own exit code.
#include "collector/run_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "collector/launcher.h"
#include "collector/profiled_run.h"
#include "collector/profiling_options.h"
#include "collector/report_command.h"
#include "collector/run_directory.h"
#include "collector/terminal_status.h"

namespace rlscope::collector {

namespace {

constexpr const char* kRunUsageBeforeProfilingOptions = R"USAGE(usage: rlscope run [OPTIONS] [--] COMMAND [ARGS...]

Profile COMMAND and print where its time went: per operation (inferred from
the Python functions running - simulation, inference, backprop, replay - or
given by NVTX ranges and rlscope.operation(); "(none)" outside any) and per
level of the stack (Python, Backend, Simulator, Native, CUDA API). Time a
thread spends blocked (a lock, queue, Event.wait, sleep, select/poll,
socket or pipe read, waitpid) is its Wait: shown per thread and process,
counted in no operation.
COMMAND runs unchanged, with the rlscope preload injected into it and into
every process it starts; nothing in it needs editing.

options:
  --out DIR            write the run into DIR (created, mode 0700; an
                       existing DIR must be your own directory, writable by
                       nobody else, holding no run, and not a link).
                       default: ./rlscope-out/<date>-<time>-<name>-<random>
)USAGE";

constexpr const char* kRunUsageAfterProfilingOptions =
    R"USAGE(  --quiet              print neither the report at the end (still written)
                       nor the live status line (shown on the terminal's
                       bottom row, kept for it, while COMMAND runs when
                       stderr is a terminal and TERM is not dumb;
                       the printed report is coloured there unless NO_COLOR)
                       nor the preload's notices ("rlscope[PID]: ..." lines
                       the report also carries: GPU capture missing or
                       degraded, dropped events); its lines about problems
                       the report cannot show (a process that lost the
                       collector, profiling off, a bad RLSCOPE_SIM entry)
                       still print
  -h, --help           show this help

results (in DIR, each file readable by you only: they hold every traced
process's command line):
  trace/<pid>.rlt  the raw event stream of each traced process
  meta.json        command, exit status, wall time
  report.json      the breakdown, for tools (schema rlscope.report/1)
  report.txt       the breakdown, for people (also printed to stderr, so the
                   command's own stdout stays exactly as without rlscope)
  report.html      the breakdown as one self-contained page (charts, per
                   process and thread; opens offline in any browser)

report: written once COMMAND and its processes have ended. Where rlscope
may use 4 CPUs or more, the trace is decoded while COMMAND runs, on a
thread of its own, so that the report is ready sooner; the report is the
same either way (RLSCOPE_LIVE_DECODING=0 decodes after, =1 always during).

exit status: COMMAND's own (128+N if it died of signal N); as from a shell,
127 if COMMAND is not found and 126 if it cannot be executed; 2 for a usage
error; 1 if rlscope itself failed before
starting COMMAND.

signals: COMMAND runs in its own process group, which owns the terminal
(Ctrl-C and Ctrl-Z reach it directly, as from a shell), with the signal
mask and ignored signals rlscope was started with (nohup's SIGHUP stays
ignored). SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to rlscope (or to its
process group) are passed on to COMMAND's group once; rlscope then waits
for COMMAND to finish and still writes the report. After COMMAND exits,
Ctrl-C stops the report.
)USAGE";

std::string RunUsage() {
  return absl::StrCat(kRunUsageBeforeProfilingOptions, kProfilingOptionsHelp, kCaptureOptionsHelp,
                      kRunUsageAfterProfilingOptions);
}

struct RunOptions {
  std::optional<std::string> out;
  bool quiet = false;
  ProfilingOptions profiling;
  std::vector<std::string> command;
};

absl::StatusOr<RunOptions> ParseRunOptions(const std::vector<std::string>& args, bool* help) {
  RunOptions options;
  ArgCursor cursor(args);
  while (cursor.AtOption()) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      *help = true;
      return options;
    } else if (option.name == "--out" || option.name == "-o") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("run", std::string(value.status().message()));
      options.out = *value;
    } else if (option.name == "--quiet" || option.name == "-q") {
      options.quiet = true;
    } else {
      absl::StatusOr<bool> taken = TakeProfilingOption("run", option, cursor, options.profiling);
      if (!taken.ok()) return taken.status();
      if (!*taken) return UsageError("run", absl::StrFormat("unknown option '%s'", option.name));
    }
  }
  if (cursor.AtSeparator()) cursor.Take();
  options.command = cursor.TakeRest();
  if (options.command.empty()) return UsageError("run", "no command to profile was given");
  const CaptureWindow& capture = options.profiling.capture;
  if (!capture.operation.empty() && !capture.skip && !capture.count) {
    return UsageError("run", "--capture-op names what --skip and --capture count: give one of them too");
  }
  if (capture.every && (!capture.count || *capture.count >= *capture.every)) {
    return UsageError("run", "--every P repeats a window of --capture M instances: give --capture M too, with M < P");
  }
  // Each kind opens capture on its own; mixed, one would override another
  // (a --capture count would open at the start despite a --delay).
  const int kinds = (capture.delay_ns || capture.duration_ns ? 1 : 0) + (capture.by_instances() ? 1 : 0) +
                    (capture.api || capture.profiler_api || !capture.nvtx_range.empty() ? 1 : 0) +
                    (capture.signal != 0 ? 1 : 0);
  if (kinds > 1) {
    return UsageError("run",
                      "use one kind of capture window per run: --delay/--duration (time), --skip/--capture "
                      "(instances), --capture-range, or --capture-signal");
  }
  return options;
}

}  // namespace

int RunCommandMain(const std::vector<std::string>& args) {
  bool help = false;
  absl::StatusOr<RunOptions> options = ParseRunOptions(args, &help);
  if (help) {
    std::cout << RunUsage();
    return 0;
  }
  if (!options.ok()) {
    std::cerr << options.status().message() << "\n";
    return 2;
  }
  // Checked before the run directory is made, so a broken installation
  // leaves nothing behind (ProfileCommand looks it up again).
  if (absl::StatusOr<Installation> installation = FindInstallation(); !installation.ok()) {
    std::cerr << "rlscope run: " << installation.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::string> run_dir = PrepareRunDirectory(options->out, options->command);
  if (!run_dir.ok()) {
    std::cerr << "rlscope run: " << run_dir.status().message() << "\n";
    return 1;
  }
  ProfileRequest request;
  request.command = options->command;
  request.run_dir = *run_dir;
  SetProfilingOptions(options->profiling, request);
  // --quiet: the report (which says it is uncorrected, and why) only.
  request.say_calibration_problem = !options->quiet;
  // On a terminal: a live status line while COMMAND runs, emphasis in the
  // printed report (report.txt stays plain: WriteReport wrote it already).
  const bool stderr_is_tty = isatty(STDERR_FILENO) == 1;
  request.status_line = !options->quiet && StatusLineEnabled(stderr_is_tty, std::getenv("TERM"));
  request.quiet_preload = options->quiet;
  request.decode_during_run = true;
  const bool color = ColorEnabled(stderr_is_tty, std::getenv("NO_COLOR"), std::getenv("TERM"));
  absl::StatusOr<ProfileOutcome> outcome = ProfileCommand(request);
  if (!outcome.ok()) {
    std::cerr << "rlscope run: " << outcome.status().message() << "\n";
    return ExitCodeOfLaunchFailure(outcome.status());
  }
  ReportOutcome report = WriteReport(*run_dir, "", outcome->decoding.get());
  if (!report.status.ok()) {
    std::cerr << "rlscope run: " << report.status.message() << "\n";
  } else if (!options->quiet) {
    std::cerr << "\n"
              << Colorize(report.text, color) << "\nrlscope: results in " << *run_dir << "/; open " << *run_dir
              << "/report.html in a browser for the charts\n";
  }
  return outcome->exit_code;
}

}  // namespace rlscope::collector
