#include "collector/profiling_options.h"

#include <csignal>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration/overhead_model.h"
#include "format/rule_file.h"
#include "report/memory_budget.h"

namespace rlscope::collector {

const char kProfilingOptionsHelp[] = R"HELP(  --rules FILE         more operation/library rules (format: the comments
                       of share/rlscope/rules/default.rules); repeatable
  --sim LIB:PATTERN    also time calls to functions matching the glob
                       PATTERN in libraries matching LIB as Simulator time,
                       e.g. --sim '*libmysim*:sim_step*'; repeatable
  --backend LIB:PATTERN
                       calls from the program itself (not from its
                       libraries) to functions matching PATTERN in libraries
                       matching LIB are Backend time: for native programs
                       using an ML backend's C++ API (libtorch's is hooked
                       by default); repeatable
  --comm LIB:PATTERN   calls from any library to functions matching PATTERN
                       in libraries matching LIB are Communication time:
                       for a collective library rlscope does not know
                       (gloo's collectives, the NCCL API and MPI_* are
                       hooked by default); repeatable
  --nvtx-domain GLOB   NVTX ranges of named domains matching GLOB are
                       operations too (default: only the default domain's;
                       libraries such as CUB and XLA annotate their
                       internals in their own domains); repeatable
  --cupti PATH         the CUPTI library to use for the GPU level (default:
                       the one the program already loaded, else
                       libcupti.so.13 from the loader path, $CUDA_HOME or
                       /usr/local/cuda)
  --no-cupti           do not capture the GPU level (GPU activity, CUDA
                       calls that bypass libcudart): for comparing overhead,
                       or when another tool needs CUPTI
  --calibration FILE   correct the report with this calibration (default:
                       this machine's, written by `rlscope calibrate`;
                       without one the report is uncorrected)
  --keep-free SIZE     stop writing the trace (the command runs on; what
                       was written stays readable) when the filesystem of
                       the output directory has less than SIZE free
                       (e.g. 20G; 0: write until it is full, up to
                       room set aside for the reports: the smaller of
                       8M and a quarter of the free space), so a long
                       run cannot fill the disk the command itself writes
                       to. default: the smaller of 1G and 5% of that
                       filesystem
  --uncompressed-trace write trace/<pid>.rlt as the plain stream of frames
                       (about 4x larger) instead of zstd blocks; both
                       are read by every command
)HELP";

const char kCaptureOptionsHelp[] = R"HELP(  --delay SECONDS      capture only from SECONDS after the start (decimals
                       allowed); before, only operation boundaries are
                       recorded, so the report still counts every
                       instance. Every process of the run counts from the
                       run's start
  --duration SECONDS   stop capturing SECONDS after capture opened (after
                       --delay, else at the start), for good: a long run
                       is traced for a window only
  --capture-range api  capture only between rlscope.start() and
                       rlscope.stop() (or inside `with rlscope.capture():`)
                       in the program's Python code; closed until the
                       first start()
  --capture-range cudaProfilerApi
                       capture only between cudaProfilerStart() and
                       cudaProfilerStop() (torch.cuda.profiler.start()
                       and stop(); the driver's cuProfilerStart/Stop
                       too, where CUPTI runs; a CUDA 12 runtime's only
                       through CUPTI); closed until the first start
  --capture-range nvtx:NAME
                       capture only while an NVTX range named NAME is
                       open on some thread (push/pop or start/end, of
                       the default domain or one --nvtx-domain selects;
                       nested ones close at the outermost end). A bare
                       NAME other than api and cudaProfilerApi means
                       the same
  --skip N             capture from the (N+1)th instance of --capture-op's
                       operation on (default simulation: an env step), in
                       each process, counted as the preload sees them
                       (an env reset is not a step)
  --capture M          capture M instances of it, then stop for good
                       (from the start, or after --skip)
  --every P            with --capture M: capture M instances of every P
                       (M < P), from --skip on, to the end of the run:
                       windows spread over the whole run, so that its
                       estimate holds for a program whose steps change
                       cost as it goes (random actions, then learning)
  --capture-op NAME    the operation --skip and --capture count (default
                       simulation)
  --capture-signal [SIG]
                       each SIG sent to a process of the run (kill -USR2
                       PID) toggles its capture; closed until the first
                       (default SIGUSR2; pick one the program does not
                       handle itself). Edges land within 20 ms
)HELP";

namespace {

// ParseSeconds: a non-negative decimal number of seconds, in ns (at most a
// year, so that adding it to a clock cannot overflow).
std::optional<int64_t> ParseSeconds(const std::string& text) {
  double seconds = 0;
  if (text.empty() || !absl::SimpleAtod(text, &seconds) || !(seconds >= 0) || seconds > 365.0 * 24 * 3600) {
    return std::nullopt;
  }
  return static_cast<int64_t>(seconds * 1e9);
}

// SignalNumber: "USR2", "SIGUSR2", "HUP", "SIGRTMIN+3" or "12" as a signal
// number; 0 for anything else, and for signals a program cannot give to a
// handler or whose default is needed (KILL, STOP, the crash signals rlscope
// flushes on).
int SignalNumber(std::string text) {
  if (absl::StartsWith(text, "SIG")) text = text.substr(3);
  int number = 0;
  if (absl::SimpleAtoi(text, &number)) {
  } else if (text == "USR1") {
    number = SIGUSR1;
  } else if (text == "USR2") {
    number = SIGUSR2;
  } else if (text == "HUP") {
    number = SIGHUP;
  } else if (text == "WINCH") {
    number = SIGWINCH;
  } else if (int offset = 0; absl::StartsWith(text, "RTMIN+") && absl::SimpleAtoi(text.substr(6), &offset)) {
    if (offset < 0 || offset > SIGRTMAX - SIGRTMIN) return 0;
    number = SIGRTMIN + offset;
  } else {
    return 0;
  }
  // Between the last standard signal and SIGRTMIN: glibc's own.
  if (number > SIGSYS && number < SIGRTMIN) return 0;
  for (int refused : {SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGINT, SIGTERM,
                      SIGCHLD, SIGPIPE}) {
    if (number == refused) return 0;
  }
  return number > 0 && number < NSIG ? number : 0;
}

// TakeCaptureRange: --capture-range's value. One range per run: two would
// each open what the other closed.
absl::StatusOr<bool> TakeCaptureRange(const std::string& command, const std::string& value, CaptureWindow& capture) {
  if (capture.api || capture.profiler_api || !capture.nvtx_range.empty()) {
    return UsageError(command, "--capture-range is given once per run");
  }
  if (value == "api") {
    capture.api = true;
  } else if (value == "cudaProfilerApi") {
    capture.profiler_api = true;
  } else {
    // Nsight's spelling is "nvtx" with the name apart; here it is one value.
    // A keyword mistyped would otherwise wait for a range of that name.
    const std::string lower = absl::AsciiStrToLower(value);
    if (lower == "api" || lower == "cudaprofilerapi" ||
        (absl::StartsWith(lower, "nvtx:") && !absl::StartsWith(value, "nvtx:"))) {
      return UsageError(command,
                        absl::StrFormat("--capture-range: '%s' is spelled api, cudaProfilerApi or nvtx:NAME", value));
    }
    const std::string range = absl::StartsWith(value, "nvtx:") ? value.substr(5) : value;
    if (range.find('@') != std::string::npos) {
      return UsageError(command, absl::StrFormat("--capture-range: '%s': a range is matched by its name in every "
                                                 "domain rlscope records (--nvtx-domain selects named ones); "
                                                 "give the name without @DOMAIN",
                                                 value));
    }
    if (range.empty() || value == "nvtx") {
      return UsageError(command, absl::StrFormat("--capture-range wants api, cudaProfilerApi or nvtx:NAME (an NVTX "
                                                 "range's name), not '%s'",
                                                 value));
    }
    capture.nvtx_range = range;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> TakeProfilingOption(const std::string& command, const ParsedOption& option, ArgCursor& cursor,
                                         ProfilingOptions& options) {
  const std::string& name = option.name;
  if (name == "--no-cupti") {
    options.cupti = false;
    return true;
  }
  if (name == "--uncompressed-trace") {
    options.uncompressed_trace = true;
    return true;
  }
  if (name == "--capture-signal") {
    // Its value is optional: `--capture-signal=USR1`, or a signal's name as
    // the next argument (`--capture-signal USR1`), which no command is.
    std::string signal = option.inline_value.value_or("USR2");
    int number = 0;  // A bare number stays an argument: it may be the command's.
    if (!option.inline_value.has_value() && !cursor.AtEnd() && !cursor.AtSeparator() &&
        SignalNumber(cursor.Peek()) != 0 && !absl::SimpleAtoi(cursor.Peek(), &number)) {
      signal = cursor.Take();
    }
    options.capture.signal = SignalNumber(signal);
    if (options.capture.signal == 0) {
      return UsageError(command, absl::StrFormat("--capture-signal wants a signal (USR1, USR2, HUP, SIGRTMIN+N or a "
                                                 "number), not '%s'",
                                                 signal));
    }
    return true;
  }
  if (name == "--skip" || name == "--capture" || name == "--every" || name == "--capture-op") {
    absl::StatusOr<std::string> value = cursor.TakeValue(option);
    if (!value.ok()) return UsageError(command, std::string(value.status().message()));
    if (name == "--capture-op") {
      if (value->empty()) return UsageError(command, "--capture-op wants an operation's name");
      options.capture.operation = *value;
      return true;
    }
    const int64_t least = name == "--capture" ? 1 : name == "--every" ? 2 : 0;
    const std::optional<int64_t> n = ParseWholeNumber(*value, least, int64_t{1} << 50);
    if (!n.has_value()) {
      return UsageError(command, absl::StrFormat("%s wants a whole number of instances%s, not '%s'", name,
                                                 least > 0 ? absl::StrFormat(" (at least %d)", least) : "", *value));
    }
    (name == "--skip" ? options.capture.skip : name == "--every" ? options.capture.every : options.capture.count) = *n;
    return true;
  }
  if (name == "--delay" || name == "--duration" || name == "--capture-range") {
    absl::StatusOr<std::string> value = cursor.TakeValue(option);
    if (!value.ok()) return UsageError(command, std::string(value.status().message()));
    if (name == "--capture-range") return TakeCaptureRange(command, *value, options.capture);
    const std::optional<int64_t> ns = ParseSeconds(*value);
    if (!ns.has_value() || (name == "--duration" && *ns == 0)) {
      return UsageError(command, absl::StrFormat("%s wants %sseconds (e.g. 30 or 2.5), not '%s'", name,
                                                 name == "--duration" ? "a positive number of " : "", *value));
    }
    (name == "--delay" ? options.capture.delay_ns : options.capture.duration_ns) = *ns;
    return true;
  }
  if (name != "--rules" && name != "--sim" && name != "--backend" && name != "--comm" && name != "--nvtx-domain" &&
      name != "--cupti" && name != "--calibration" && name != "--keep-free") {
    return false;
  }
  absl::StatusOr<std::string> value = cursor.TakeValue(option);
  if (!value.ok()) return UsageError(command, std::string(value.status().message()));
  if (name == "--keep-free") {
    options.keep_free_bytes = report::ParseByteSize(*value);
    if (!options.keep_free_bytes) {
      return UsageError(command,
                        absl::StrFormat("--keep-free wants a size (bytes, or with K, M, G or T), not '%s'", *value));
    }
  } else if (name == "--rules") {
    // Checked now, so a typo fails before the (possibly long) run.
    RuleSet rules;
    std::string error;
    if (!LoadRuleFile(*value, rules, &error)) return UsageError(command, error);
    options.rule_files.push_back(std::filesystem::absolute(*value).string());
  } else if (name == "--sim" || name == "--backend" || name == "--comm") {
    const size_t colon = value->find(':');
    if (colon == 0 || colon == std::string::npos || colon + 1 == value->size() ||
        value->find(',') != std::string::npos) {
      return UsageError(command, absl::StrFormat("%s wants LIB:PATTERN (two globs), not '%s'", name, *value));
    }
    (name == "--sim"       ? options.simulator_patterns
     : name == "--backend" ? options.backend_patterns
                           : options.communication_patterns)
        .push_back(*value);
  } else if (name == "--nvtx-domain") {
    if (value->empty() || value->find(',') != std::string::npos) {
      return UsageError(command, absl::StrFormat("--nvtx-domain wants one glob, not '%s'", *value));
    }
    options.nvtx_domains.push_back(*value);
  } else if (name == "--calibration") {
    // Read now, so a bad file fails before the (possibly long) run.
    absl::StatusOr<calibration::OverheadModel> model = calibration::ReadOverheadModel(*value);
    if (!model.ok()) return UsageError(command, absl::StrFormat("--calibration: %s", model.status().message()));
    options.calibration_path = std::filesystem::absolute(*value).string();
  } else {  // --cupti
    std::error_code error;
    if (!std::filesystem::is_regular_file(*value, error)) {
      return UsageError(command, absl::StrFormat("--cupti: %s is not a file", *value));
    }
    options.cupti_path = std::filesystem::absolute(*value).string();
  }
  return true;
}

std::string DescribeCaptureWindow(const CaptureWindow& window) {
  std::vector<std::string> parts;
  // Seconds as typed: whole ones bare, others to the millisecond.
  auto seconds = [](int64_t ns) {
    return ns % 1'000'000'000 == 0 ? absl::StrFormat("%d", ns / 1'000'000'000) : absl::StrFormat("%.3f", ns / 1e9);
  };
  if (window.delay_ns) parts.push_back("--delay " + seconds(*window.delay_ns));
  if (window.duration_ns) parts.push_back("--duration " + seconds(*window.duration_ns));
  if (window.api) parts.push_back("--capture-range api");
  if (window.profiler_api) parts.push_back("--capture-range cudaProfilerApi");
  if (!window.nvtx_range.empty()) parts.push_back("--capture-range nvtx:" + window.nvtx_range);
  if (window.signal != 0) {
    const char* name = sigabbrev_np(window.signal);
    parts.push_back(name != nullptr ? absl::StrCat("--capture-signal=SIG", name)
                                    : absl::StrFormat("--capture-signal=%d", window.signal));
  }
  if (window.skip) parts.push_back(absl::StrFormat("--skip %d", *window.skip));
  if (window.count) parts.push_back(absl::StrFormat("--capture %d", *window.count));
  if (window.every) parts.push_back(absl::StrFormat("--every %d", *window.every));
  if (window.by_instances() && !window.operation.empty()) parts.push_back("--capture-op " + window.operation);
  return absl::StrJoin(parts, " ");
}

}  // namespace rlscope::collector
