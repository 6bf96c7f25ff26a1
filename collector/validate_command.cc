// `rlscope validate`: how much does profiling slow COMMAND down, and how
// close does the overhead correction get to the unprofiled wall time?
// Runs COMMAND unprofiled and profiled (through ProfileCommand, exactly as
// `rlscope run` does) in interleaved pairs and summarises the ratios.
#include "collector/validate_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "collector/cli_args.h"
#include "collector/file_output.h"
#include "collector/launcher.h"
#include "collector/profiled_run.h"
#include "collector/profiling_options.h"
#include "collector/report_command.h"
#include "collector/run_directory.h"
#include "collector/validation_summary.h"
#include "nlohmann/json.hpp"
#include "report/python_hook_check.h"
#include "report/run_report.h"

namespace rlscope::collector {

namespace fs = std::filesystem;

namespace {

constexpr const char* kValidateUsageBeforeProfilingOptions =
    R"USAGE(usage: rlscope validate [-n N] [--warmup K] [--out DIR] [OPTIONS] -- COMMAND [ARGS...]

Measure how much rlscope slows COMMAND down, and how well the overhead
correction of its report undoes that: run COMMAND N times without rlscope
and N times under rlscope (as 'rlscope run' would), and compare wall times.

Each repetition is a pair of runs. Odd-numbered repetitions (1, 3, ...) run
COMMAND unprofiled first, even-numbered ones profiled first, so a slow drift
of the machine (clock, temperature, other load) affects both kinds alike.
Before them, K warm-up runs (unprofiled, not measured) fill the page cache
and Python's bytecode caches for what both kinds of run share.

Wall time is measured the same way for both kinds: from just before COMMAND
is started to when it is reaped (for profiled runs, meta.json's wall_ns).
COMMAND's stdin is /dev/null and its stdout and stderr go to files in DIR,
so the runs are non-interactive and validate's own output stays readable.
The numbers are only as good as the machine is quiet: stop other work while
it runs, and prefer N >= 5 for a meaningful spread.

options:
  -n N                 repetitions (pairs of runs), 1 to 10000 (default 5)
  --warmup K           unmeasured unprofiled runs first, 0 to 10000
                       (default 1)
  --out DIR            write everything into DIR (created, mode 0700; an
                       existing DIR must be your own empty directory,
                       writable by nobody else, and not a link). default:
                       ./rlscope-out/<date>-<time>-validate-<name>-<random>
profiling options (as for 'rlscope run'; every profiled run uses them):
)USAGE";

constexpr const char* kValidateUsageAfterProfilingOptions = R"USAGE(  -h, --help           show this help

what is reported (on stderr: a line per repetition, then a summary):
  unprofiled, profiled  the two wall times of the repetition, in seconds
  corrected      the profiled run's report's estimate of the unprofiled wall
                 time (rlscope subtracts its own overhead); n/a when that
                 report was not corrected (the summary says why, e.g. no
                 calibration for this machine)
  raw overhead   profiled / unprofiled: how much slower COMMAND runs under
                 rlscope (1.000x: not at all)
  bias           (corrected - unprofiled) / unprofiled: how far the corrected
                 total is from the real one (0%: exactly right). Without a
                 correction only the uncorrected bias is given,
                 (profiled - unprofiled) / unprofiled = raw overhead - 1
  summary        for each: the mean over the repetitions, min .. max and
                 the sample standard deviation (n - 1) of the per-repetition
                 values; and the bias of means, (mean corrected - mean
                 unprofiled) / mean unprofiled (likewise uncorrected)

results (in DIR):
  validate.json      the numbers, for tools (schema rlscope.validate/1, below)
  profiled-NN/       the profiled run of repetition NN: a complete run
                     directory ('rlscope report DIR/profiled-NN')
  KIND-NN.stdout, KIND-NN.stderr
                     COMMAND's output in each run (KIND: warmup,
                     unprofiled, profiled)

validate.json:
  schema             "rlscope.validate/1"
  command, n, warmup the command and the options given
  status             "complete", "interrupted" or "failed"
  message            why it stopped early ("" when complete)
  completed          repetitions measured
  corrected          every measured repetition's report was corrected
  correction_message why not (from the first uncorrected report)
  repetitions        per repetition: rep (1-based), order (["unprofiled",
                     "profiled"] or the reverse), unprofiled_wall_ns,
                     profiled_wall_ns, corrected_wall_ns (null when not
                     corrected), raw_overhead, uncorrected_bias, bias (null
                     when not corrected), run_dir (relative to DIR)
  summary            null when no repetition was measured, else:
                     unprofiled_wall_s, profiled_wall_s, corrected_wall_s,
                     raw_overhead, uncorrected_bias, bias: each {mean,
                     stddev (null for one repetition), min, max}, or null
                     when not corrected; uncorrected_bias_of_means,
                     bias_of_means (null when not corrected)
  Biases are fractions (0.05 is +5%).

exit status: 0 every repetition measured; 1 COMMAND failed (exited non-zero
or died) in some run (validate names the run and its stderr file) or
rlscope failed; 127 COMMAND not found, 126 COMMAND cannot be executed (as
from a shell); 2 usage error; 128+N when
interrupted by signal N (130 for Ctrl-C).

signals: COMMAND runs in its own process group and the terminal stays with
rlscope. Ctrl-C (SIGINT), SIGTERM, SIGHUP and SIGQUIT are passed on to the
running COMMAND; validate then stops, drops the unfinished repetition and
writes validate.json and the summary of the repetitions measured so far.
One that arrives while a profiled run is being analysed takes effect when
the analysis is done. Ctrl-Z suspends COMMAND and rlscope together, but the
time suspended counts in that run's wall time: avoid it.
)USAGE";

std::string ValidateUsage() {
  return absl::StrCat(kValidateUsageBeforeProfilingOptions, kProfilingOptionsHelp, kValidateUsageAfterProfilingOptions);
}

struct ValidateOptions {
  int repetitions = 5;
  int warmup = 1;
  std::optional<std::string> out;
  ProfilingOptions profiling;
  std::vector<std::string> command;
};

// More repetitions or warm-ups than anyone waits for: a typo, refused.
constexpr int64_t kMaxRuns = 10000;

absl::StatusOr<ValidateOptions> ParseValidateOptions(const std::vector<std::string>& args, bool* help) {
  ValidateOptions options;
  ArgCursor cursor(args);
  while (cursor.AtOption()) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      *help = true;
      return options;
    } else if (option.name == "-n" || option.name == "--repetitions") {
      absl::StatusOr<int64_t> count = TakeWholeNumber("validate", option, cursor, 1, kMaxRuns);
      if (!count.ok()) return count.status();
      options.repetitions = static_cast<int>(*count);
    } else if (option.name == "--warmup") {
      absl::StatusOr<int64_t> count = TakeWholeNumber("validate", option, cursor, 0, kMaxRuns);
      if (!count.ok()) return count.status();
      options.warmup = static_cast<int>(*count);
    } else if (option.name == "--out" || option.name == "-o") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("validate", std::string(value.status().message()));
      options.out = *value;
    } else {
      absl::StatusOr<bool> taken = TakeProfilingOption("validate", option, cursor, options.profiling);
      if (!taken.ok()) return taken.status();
      if (!*taken) return UsageError("validate", absl::StrFormat("unknown option '%s'", option.name));
      // Validation compares whole runs' wall times: a window would leave
      // most of the profiled run's cost unestimated.
      if (options.profiling.capture.any()) {
        return UsageError("validate", absl::StrFormat("%s: validate compares whole runs; capture windows are for "
                                                      "'rlscope run'",
                                                      option.name));
      }
    }
  }
  if (!cursor.AtEnd() && !cursor.AtSeparator()) {
    return UsageError("validate", absl::StrFormat("put '--' before the command to validate ('%s' ...): rlscope "
                                                  "validate [OPTIONS] -- COMMAND [ARGS...]",
                                                  cursor.Peek()));
  }
  if (cursor.AtSeparator()) cursor.Take();
  options.command = cursor.TakeRest();
  if (options.command.empty()) return UsageError("validate", "no command to validate was given");
  return options;
}

// PrepareValidateDirectory: creates DIR (CreateOutputDirectory: 0700, no
// links, not another user's), which must be absent or empty (it receives
// many files).
absl::StatusOr<std::string> PrepareValidateDirectory(const std::optional<std::string>& requested,
                                                     const std::vector<std::string>& command) {
  absl::StatusOr<std::string> dir = CreateOutputDirectory(requested, command, "validate");
  if (!dir.ok()) return dir.status();
  std::error_code error;
  if (!fs::is_empty(*dir, error)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("%s exists and is not an empty directory; choose another --out or remove it first", *dir));
  }
  return dir;
}

constexpr int kInterruptions[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// PendingInterruption: the interrupting signal that arrived while blocked
// (between runs), or 0.
int PendingInterruption() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  for (int signal_number : kInterruptions) {
    if (sigismember(&pending, signal_number)) return signal_number;
  }
  return 0;
}

// ShellWords: `command` as a shell would need it typed (for display).
std::string ShellWords(const std::vector<std::string>& command) {
  std::vector<std::string> words;
  for (const std::string& arg : command) {
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return isalnum(static_cast<unsigned char>(c)) || strchr("-_./=:,+@%", c) != nullptr;
    });
    words.push_back(plain ? arg : absl::StrCat("'", absl::StrReplaceAll(arg, {{"'", "'\\''"}}), "'"));
  }
  return absl::StrJoin(words, " ");
}

const char* SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT (Ctrl-C)";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return strsignal(signal_number);
  }
}

// One validation: its options, directory and what has been measured.
class Validation {
 public:
  Validation(ValidateOptions options, std::string dir) : options_(std::move(options)), dir_(std::move(dir)) {}

  // Run: the warm-ups and the repetitions, until done or stopped; returns
  // the exit code.
  int Run() {
    std::cerr << absl::StrFormat(
        "rlscope validate: %d repetition(s) of: %s\n"
        "  each an unprofiled (U) and a profiled (P) run, alternating which goes first; %d unmeasured warm-up "
        "run(s) before them\n  results in %s/\n",
        options_.repetitions, ShellWords(options_.command), options_.warmup, dir_);
    for (int i = 1; i <= options_.warmup; ++i) {
      int64_t wall_ns = 0;
      if (!RunUnprofiledOnce("warmup", i, absl::StrFormat("warm-up run %d", i), &wall_ns)) return Finish();
      std::cerr << absl::StrFormat("warm-up %d/%d: %.4f s (not measured)\n", i, options_.warmup, Seconds(wall_ns));
    }
    std::cerr << "\n" << RepetitionTableHeader();
    for (int i = 1; i <= options_.repetitions; ++i) {
      Repetition rep;
      rep.index = i;
      rep.unprofiled_first = (i - 1) % 2 == 0;
      for (int half = 0; half < 2; ++half) {
        const bool unprofiled = (half == 0) == rep.unprofiled_first;
        const bool ok =
            unprofiled ? RunUnprofiledOnce("unprofiled", i, absl::StrFormat("the unprofiled run of repetition %d", i),
                                           &rep.unprofiled_wall_ns)
                       : RunProfiledOnce(rep);
        if (!ok) return Finish();
      }
      repetitions_.push_back(rep);
      std::cerr << RepetitionLine(rep);
    }
    return Finish();
  }

 private:
  std::string Stem(const std::string& kind, int index) const {
    return (fs::path(dir_) / absl::StrFormat("%s-%02d", kind, index)).string();
  }

  // Stop: the validation ends early.
  bool Stop(const std::string& status, int exit_code, const std::string& message) {
    status_ = status;
    exit_code_ = exit_code;
    message_ = message;
    return false;
  }

  // Check: whether a run may count; otherwise Stop()s with the reason.
  bool Check(const absl::StatusOr<ProfileOutcome>& outcome, bool profiled, const std::string& what,
             const std::string& stem) {
    if (!outcome.ok()) {
      return Stop("failed", ExitCodeOfLaunchFailure(outcome.status()),
                  absl::StrFormat("%s: %s", what, outcome.status().message()));
    }
    if (outcome->interrupted_by != 0) {
      return Stop("interrupted", 128 + outcome->interrupted_by,
                  absl::StrFormat("interrupted by %s during %s", SignalName(outcome->interrupted_by), what));
    }
    if (outcome->exit_code != 0) {
      std::string message = absl::StrFormat("%s failed: the command exited with status %d (its stderr: %s.stderr)",
                                            what, outcome->exit_code, stem);
      if (profiled && unprofiled_succeeded_) {
        message += "; its unprofiled runs exited 0, so it fails only under rlscope";
      } else if (!profiled && profiled_succeeded_) {
        message += "; its profiled runs exited 0";
      }
      return Stop("failed", 1, message);
    }
    (profiled ? profiled_succeeded_ : unprofiled_succeeded_) = true;
    return true;
  }

  bool RunUnprofiledOnce(const std::string& kind, int index, const std::string& what, int64_t* wall_ns) {
    if (int signal_number = PendingInterruption(); signal_number != 0) return StopForPending(signal_number, what);
    const std::string stem = Stem(kind, index);
    UnprofiledRequest request;
    request.command = options_.command;
    request.give_terminal = false;
    request.stdin_path = "/dev/null";
    request.stdout_path = stem + ".stdout";
    request.stderr_path = stem + ".stderr";
    absl::StatusOr<ProfileOutcome> outcome = RunUnprofiled(request);
    if (!Check(outcome, /*profiled=*/false, what, stem)) return false;
    *wall_ns = outcome->wall_ns;
    return true;
  }

  bool RunProfiledOnce(Repetition& rep) {
    const std::string what = absl::StrFormat("the profiled run of repetition %d", rep.index);
    if (int signal_number = PendingInterruption(); signal_number != 0) return StopForPending(signal_number, what);
    const std::string stem = Stem("profiled", rep.index);
    absl::StatusOr<std::string> run_dir = PrepareRunDirectory(stem, options_.command);
    if (!run_dir.ok()) return Stop("failed", 1, absl::StrFormat("%s: %s", what, run_dir.status().message()));
    ProfileRequest request;
    request.command = options_.command;
    request.run_dir = *run_dir;
    SetProfilingOptions(options_.profiling, request);
    request.give_terminal = false;
    request.stdin_path = "/dev/null";
    request.stdout_path = stem + ".stdout";
    request.stderr_path = stem + ".stderr";
    request.log_prefix = "rlscope validate";
    request.say_calibration_problem = rep.index == 1;  // Once, not per repetition.
    request.decode_during_run = true;                  // As `rlscope run` does: its time is what is measured.
    absl::StatusOr<ProfileOutcome> outcome = ProfileCommand(request);
    if (!Check(outcome, /*profiled=*/true, what, stem)) return false;
    const ReportOutcome written = WriteReport(*run_dir, "", outcome->decoding.get());
    if (!written.status.ok()) {
      return Stop("failed", 1, absl::StrFormat("cannot analyse %s: %s", *run_dir, written.status.message()));
    }
    if (written.data_damaged) {
      std::cerr << "rlscope validate: warning: some trace data of " << *run_dir << " was damaged; see its report.txt\n";
    }
    rep.profiled_wall_ns = outcome->wall_ns;
    rep.run_dir = fs::path(*run_dir).filename().string();
    const report::RunReport& analysed = *written.report;
    if (const auto hook = report::CheckPythonHook(analysed.overhead); hook && analysed.corrected) {
      rep.python_hook_ns = static_cast<int64_t>(hook->hook_ns);
      rep.python_hook_priced_ns = static_cast<int64_t>(hook->priced_ns);
    }
    if (analysed.corrected && analysed.corrected_wall_ns) {
      rep.corrected_wall_ns = analysed.corrected_wall_ns;
    } else {
      rep.correction_message = !analysed.correction_message.empty() ? analysed.correction_message
                               : analysed.corrected                 ? "the report gives no corrected wall time"
                                                                    : "the report gives no reason";
    }
    return true;
  }

  bool StopForPending(int signal_number, const std::string& what) {
    return Stop("interrupted", 128 + signal_number,
                absl::StrFormat("interrupted by %s before %s", SignalName(signal_number), what));
  }

  nlohmann::ordered_json ToJson() const {
    const bool corrected = !repetitions_.empty() && SummarizeRepetitions(repetitions_).corrected;
    return {{"schema", "rlscope.validate/1"},
            {"command", options_.command},
            {"n", options_.repetitions},
            {"warmup", options_.warmup},
            {"status", status_},
            {"message", message_},
            {"completed", repetitions_.size()},
            {"corrected", corrected},
            {"correction_message", UncorrectedReason(repetitions_)},
            {"repetitions", RepetitionsJson(repetitions_)},
            {"summary", SummaryJson(repetitions_)}};
  }

  // Finish: writes validate.json and prints the summary; the exit code.
  int Finish() {
    if (!message_.empty()) std::cerr << "rlscope validate: " << message_ << "\n";
    if (!repetitions_.empty()) {
      std::cerr << FormatSummaryText(repetitions_);
    } else {
      std::cerr << "rlscope validate: no repetition was measured\n";
    }
    const fs::path json_path = fs::path(dir_) / "validate.json";
    if (absl::Status written = ReplaceRunFile(
            json_path, ToJson().dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
        !written.ok()) {
      std::cerr << "rlscope validate: " << written.message() << "\n";
      if (exit_code_ == 0) exit_code_ = 1;
    }
    if (status_ == "interrupted") {
      std::cerr << absl::StrFormat("rlscope validate: interrupted after %d of %d repetition(s); results in %s/\n",
                                   repetitions_.size(), options_.repetitions, dir_);
    } else {
      std::cerr << "\nrlscope: results in " << dir_ << "/\n";
    }
    return exit_code_;
  }

  ValidateOptions options_;
  std::string dir_;
  std::vector<Repetition> repetitions_;
  std::string status_ = "complete";
  std::string message_;
  int exit_code_ = 0;
  bool unprofiled_succeeded_ = false;
  bool profiled_succeeded_ = false;
};

}  // namespace

int ValidateCommandMain(const std::vector<std::string>& args) {
  bool help = false;
  absl::StatusOr<ValidateOptions> options = ParseValidateOptions(args, &help);
  if (help) {
    std::cout << ValidateUsage();
    return 0;
  }
  if (!options.ok()) {
    std::cerr << options.status().message() << "\n";
    return 2;
  }
  if (absl::StatusOr<Installation> installation = FindInstallation(); !installation.ok()) {
    std::cerr << "rlscope validate: " << installation.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::string> dir = PrepareValidateDirectory(options->out, options->command);
  if (!dir.ok()) {
    std::cerr << "rlscope validate: " << dir.status().message() << "\n";
    return 1;
  }
  // Interruptions are held between runs (and while a profiled run is
  // analysed), so validate notices them and still writes its results; while
  // COMMAND runs, the run passes them on to it.
  sigset_t interruptions;
  sigemptyset(&interruptions);
  for (int signal_number : kInterruptions) sigaddset(&interruptions, signal_number);
  sigprocmask(SIG_BLOCK, &interruptions, nullptr);
  Validation validation(*std::move(options), *dir);
  return validation.Run();
}

}  // namespace rlscope::collector
