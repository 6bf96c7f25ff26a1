#include "collector/calibrate_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration/calibration_store.h"
#include "calibration/calibration_verdict.h"
#include "calibration/contention.h"
#include "calibration/machine_fingerprint.h"
#include "calibration/overhead_model.h"
#include "collector/calibration_cases.h"
#include "collector/calibration_sweep.h"
#include "collector/cli_args.h"
#include "format/output_file.h"
#include "report/memory_budget.h"
#include "report/run_report.h"

namespace rlscope::collector {

namespace {

namespace fs = std::filesystem;
namespace cal = rlscope::calibration;
using calibrate::Case;
using calibrate::Progress;

constexpr const char* kCalibrateUsage = R"USAGE(usage: rlscope calibrate [options]

Measures what rlscope's own work costs a profiled program on this machine,
so reports can remove it (the "corrected" view). Run it once per machine,
and again after a kernel, driver, CPU or rlscope change: `rlscope run` says
when the calibration does not match.

It runs small built-in programs that each repeat one kind of hooked call
(CUDA runtime calls with and without CUPTI, Python calls, builtins and
Python->native calls, inferred operations, simulator trampolines, nested
hooks, NVTX ranges, process start-up), unprofiled and profiled, in
alternation, and divides the extra time by the number of events. The costs
are measured in turns (one repetition of each, then the next), so that each
rests on the whole sweep rather than on a few seconds of a machine whose
speed may wander. Each cost rests on the least disturbed half of its
repetitions (busy-machine time only ever adds to one side); their spread is
kept and reported as the correction's uncertainty. With a GPU it uses the
real CUDA runtime and CUPTI; without one, rlscope's fake runtime (costs of
the hooks are real, GPU costs then do not matter). A full sweep takes a few
minutes; keep the machine otherwise quiet meanwhile.

It watches for a busy machine (load average, other work's CPU time, steal
time, involuntary switches of its loops, how much of each loop its timer
kept). A cost whose repetitions disagree more than the cost itself is
measured again, up to two more rounds. If a cost still disagrees, or steal
time reached 10 % (a wait the loops cannot see), the calibration is refused:
it says what was wrong and what was seen, stores nothing and leaves the
previous calibration file as it was (exit 1). Load alone only warns:
agreeing measurements are kept. The verdict ("trusted", or
"accepted-uncertain" with --accept-uncertain) and the figures are stored in
the file, and every report it corrects states them.

options:
  --calibration FILE   write the calibration to FILE (default: this
                       machine's file under $XDG_CACHE_HOME/rlscope or
                       ~/.cache/rlscope, which `rlscope run` looks up);
                       replaced whole, mode 0600; FILE must be absent or a
                       regular file (a link, device, FIFO or directory is
                       refused before anything is measured)
  --python PATH        a Python interpreter to calibrate (repeatable; Python
                       costs are per MAJOR.MINOR version; default: python3
                       on PATH and /usr/bin/python3)
  --repetitions N      measurements per cost (default 5, at least 2)
  --quick              shorter loops and 2 repetitions: for tests, not for
                       accurate corrections
  --accept-uncertain   store a calibration the verdict refuses all the same,
                       marked "accepted-uncertain" with its reasons (reports
                       it corrects say so); for when a quiet machine cannot
                       be had
  --check              measure nothing: say whether this machine has a
                       usable calibration (exit 0) or not (exit 1)
  -h, --help           show this help

exit status: 0 when the calibration was written; 1 when a measurement or
the file failed or the calibration was refused as untrustworthy (nothing is
written then); 2 for a usage error. With
--check: 0 when there is a usable calibration (its path on stdout), 1 when
not (why, on stderr).
)USAGE";

struct CalibrateOptions {
  std::string path;
  std::vector<std::string> pythons;
  int repetitions = 5;
  bool quick = false;
  bool check = false;
  bool accept_uncertain = false;
};

absl::StatusOr<CalibrateOptions> ParseOptions(const std::vector<std::string>& args, bool* help) {
  CalibrateOptions options;
  ArgCursor cursor(args);
  while (!cursor.AtEnd()) {
    if (!cursor.AtOption()) return UsageError("calibrate", "unexpected argument '" + cursor.Peek() + "'");
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      *help = true;
      return options;
    } else if (option.name == "--quick") {
      options.quick = true;
    } else if (option.name == "--check") {
      options.check = true;
    } else if (option.name == "--accept-uncertain") {
      options.accept_uncertain = true;
    } else if (option.name == "--repetitions") {
      absl::StatusOr<int64_t> n = TakeWholeNumber("calibrate", option, cursor, 2, 100);
      if (!n.ok()) return n.status();
      options.repetitions = static_cast<int>(*n);
    } else if (option.name == "--calibration" || option.name == "--python") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("calibrate", std::string(value.status().message()));
      if (option.name == "--calibration") {
        options.path = fs::absolute(*value).string();
      } else {
        options.pythons.push_back(*value);
      }
    } else {
      return UsageError("calibrate", "unknown option '" + option.name + "'");
    }
  }
  if (options.quick && options.repetitions == 5) options.repetitions = 2;
  return options;
}

}  // namespace

int CalibrateCommandMain(const std::vector<std::string>& args) {
  // The calibration analyses its own small runs, corrected with the costs
  // measured so far: the report stage's memory budget (memory_budget.h)
  // must neither refuse nor downgrade them, whatever the user's setting.
  setenv(report::kReportMemoryEnv, "unlimited", 1);
  bool help = false;
  absl::StatusOr<CalibrateOptions> options = ParseOptions(args, &help);
  if (help) {
    std::cout << kCalibrateUsage;
    return 0;
  }
  if (!options.ok()) {
    std::cerr << options.status().message() << "\n";
    return 2;
  }
  if (options->check) {
    const cal::CalibrationChoice choice = cal::ChooseCalibration(options->path, cal::CurrentMachine(), RLSCOPE_VERSION);
    if (!choice.model) {
      std::cerr << "rlscope calibrate: " << choice.message << "\n";
      return 1;
    }
    std::cout << choice.path << "\n";
    if (!choice.message.empty()) std::cerr << "rlscope calibrate: " << choice.message << "\n";
    return 0;
  }
  absl::StatusOr<calibrate::Layout> layout = calibrate::FindLayout();
  if (!layout.ok()) {
    std::cerr << "rlscope calibrate: " << layout.status().message() << "\n";
    return 1;
  }
  const char* tmp = getenv("TMPDIR");
  std::string scratch_template =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rlscope-calibrate-XXXXXX";
  if (mkdtemp(scratch_template.data()) == nullptr) {
    std::cerr << "rlscope calibrate: cannot make a scratch directory under " << scratch_template << "\n";
    return 1;
  }
  const fs::path scratch(scratch_template);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code error;
      fs::remove_all(dir, error);
    }
  } cleanup{scratch};

  cal::OverheadModel model;
  model.fingerprint = cal::CurrentMachine();
  model.rlscope_version = RLSCOPE_VERSION;
  model.created_unix_s = static_cast<int64_t>(time(nullptr));
  const std::string path = options->path.empty() ? cal::DefaultCalibrationPath(model.fingerprint) : options->path;
  // Checked before minutes of measuring: a link, device, FIFO or directory
  // at the name is never replaced (WriteOverheadModel refuses it too).
  if (std::string why; !CheckReplaceable(path, &why)) {
    std::cerr << "rlscope calibrate: " << path << ": " << why << "; nothing was written\n";
    return 1;
  }

  std::vector<std::string> problems;
  const std::map<std::string, std::string> pythons = calibrate::PythonVersions(options->pythons, scratch, &problems);
  for (const std::string& problem : problems) std::cerr << "rlscope calibrate: warning: " << problem << "\n";
  if (!options->pythons.empty() && pythons.size() < options->pythons.size()) {
    std::cerr << "rlscope calibrate: not every --python could be run; nothing written\n";
    return 1;
  }
  const calibrate::CudaSetup cuda = calibrate::FindCuda(*layout, scratch);
  model.fingerprint.cuda_runtime = cuda.available ? cuda.runtime : "none";
  const std::vector<std::string> native_cases =
      calibrate::ListCases({(layout->bin / "rlscope-calibrate-native").string()}, {}, scratch);
  if (native_cases.empty()) {
    std::cerr << "rlscope calibrate: " << (layout->bin / "rlscope-calibrate-native").string()
              << " cannot be run: is the build complete?\n";
    return 1;
  }
  std::vector<Case> cases = calibrate::BuildCases(*layout, cuda, native_cases, pythons, scratch);

  std::cerr << absl::StrFormat("rlscope calibrate: %s; %s; CUDA: %s; Python: %s\n", model.fingerprint.cpu,
                               model.fingerprint.gpu == "none" ? "no GPU" : model.fingerprint.gpu,
                               cuda.available ? cuda.runtime : "not calibrated (no rlscope-calibrate-cuda or runtime)",
                               pythons.empty() ? "none" : absl::StrJoin(pythons, ", ", absl::PairFormatter(" ")));
  std::cerr << absl::StrFormat(
      "  %d costs x %d repetitions, each an unprofiled and a profiled run, in turns (each cost's line once "
      "all are settled)\n",
      cases.size(), options->repetitions);
  // Test seams (contention.h, DisturbanceSeam): malformed is an error
  // before anything is measured.
  absl::StatusOr<calibrate::DisturbanceSeam> seam = calibrate::ParseDisturbanceSeam(getenv(calibrate::kTestDisturbEnv));
  cal::ContentionFigures injected;
  const char* injected_setting = getenv(cal::kTestContentionEnv);
  absl::Status injected_ok = cal::ApplyTestContention(injected_setting ? injected_setting : "", injected);
  if (!seam.ok() || !injected_ok.ok()) {
    std::cerr << "rlscope calibrate: " << (!seam.ok() ? seam.status() : injected_ok).message() << "\n";
    return 2;
  }

  Progress progress(static_cast<int>(cases.size()) * options->repetitions * 2);
  const cal::ContentionSnapshot before = cal::Snapshot();
  double load_max = before.load_average;
  absl::StatusOr<calibrate::SiteMeasurements> sites =
      calibrate::RunSweep(std::move(cases), {options->repetitions, options->quick}, scratch, *seam, progress,
                          [&] { load_max = std::max(load_max, cal::ReadLoadAverage()); });
  if (!sites.ok()) {
    std::cerr << "\nrlscope calibrate: measuring " << sites.status().message() << "\nnothing was written.\n";
    return absl::IsCancelled(sites.status()) ? 130 : 1;
  }
  cal::ContentionFigures contention = cal::Between(before, cal::Snapshot());
  contention.load_average_max = std::max(contention.load_average_max, load_max);
  for (const auto& [site, measured] : *sites) {
    if (measured.cost.events == 0 || measured.kept_fraction < 0) continue;
    if (contention.lowest_kept_fraction < 0 || measured.kept_fraction < contention.lowest_kept_fraction) {
      contention.lowest_kept_fraction = measured.kept_fraction;
      contention.lowest_kept_site = site;
    }
  }
  if (injected_setting != nullptr && *injected_setting != '\0') {
    (void)cal::ApplyTestContention(injected_setting, contention);
    std::cerr << "rlscope calibrate: test seam " << cal::kTestContentionEnv << "=" << injected_setting
              << " overrides the contention figures\n";
  }

  const cal::Verdict verdict = cal::JudgeCalibration(*sites, contention);
  for (const auto& [site, measured] : *sites) {
    model.costs[site] = measured.cost;
    if (measured.rounds > 1) model.quality.remeasured.push_back(site);
  }
  model.quality.reasons = verdict.reasons;
  model.quality.warnings = verdict.warnings;
  model.quality.contention = contention;
  std::cerr << "rlscope calibrate: seen meanwhile: " << cal::DescribeContention(contention) << "\n";
  for (const std::string& warning : verdict.warnings) std::cerr << "rlscope calibrate: warning: " << warning << "\n";
  std::error_code error;
  if (!verdict.trusted && !options->accept_uncertain) {
    const bool had_one = fs::exists(path, error);
    std::cerr << "rlscope calibrate: REFUSED: these measurements cannot be trusted, so nothing was stored ("
              << (had_one ? path + " is unchanged" : "no calibration was at " + path) << "):\n";
    for (const std::string& reason : verdict.reasons) std::cerr << "  - " << reason << "\n";
    std::cerr << "  what to do: " << cal::RefusalAdvice(contention) << "\n";
    return 1;
  }
  model.quality.verdict = std::string(verdict.trusted ? cal::kVerdictTrusted : cal::kVerdictAcceptedUncertain);
  fs::create_directories(fs::path(path).parent_path(), error);
  if (absl::Status written = cal::WriteOverheadModel(path, model); !written.ok()) {
    std::cerr << "rlscope calibrate: " << written.message() << "\n";
    return 1;
  }
  if (verdict.trusted) {
    std::cerr << "rlscope calibrate: wrote " << path << " (verdict: trusted)\n";
  } else {
    std::cerr << "rlscope calibrate: wrote " << path
              << " (verdict: accepted-uncertain, as --accept-uncertain asked; reports it corrects say so):\n";
    for (const std::string& reason : verdict.reasons) std::cerr << "  - " << reason << "\n";
  }
  std::vector<std::string> uncertain;
  for (const auto& [site, cost] : model.costs) {
    if (cal::Uncertain(cost)) uncertain.push_back(site);
  }
  if (!uncertain.empty()) {
    // Only costs that do not matter here, or accepted: named by every
    // report they correct.
    std::cerr << absl::StrFormat(
        "rlscope calibrate: %d of %d costs are uncertain (%s): their repetitions disagree more than the costs "
        "themselves, so corrections by them are approximate\n",
        uncertain.size(), model.costs.size(), absl::StrJoin(uncertain, ", "));
  }
  return 0;
}

}  // namespace rlscope::collector
