#include "calibrate_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration_store.h"
#include "calibration_verdict.h"
#include "cli_args.h"
#include "contention.h"
#include "machine_fingerprint.h"
#include "memory_budget.h"
#include "nlohmann/json.hpp"
#include "output_file.h"
#include "overhead_model.h"
#include "profiled_run.h"
#include "run_directory.h"
#include "run_report.h"

namespace rlscope::collector {

namespace {

namespace fs = std::filesystem;
namespace cal = rlscope::calibration;

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

// How a case's two runs differ.
enum class Contrast {
  kHooks,    // unprofiled vs profiled: the hooks' cost
  kCupti,    // profiled without vs with CUPTI: CUPTI's inflation
  kProcess,  // unprofiled vs profiled, whole command wall time (start-up + exit)
};

struct Case {
  Case(std::string site_name, std::vector<std::string> command, Contrast how = Contrast::kHooks)
      : site(std::move(site_name)), workload(std::move(command)), contrast(how) {}

  std::string site;                   // Where the result goes (overhead_model.h).
  std::vector<std::string> workload;  // argv, without --iterations.
  Contrast contrast = Contrast::kHooks;
  double events_per_iteration = 1;
  // Records each iteration puts in the thread's ring (0: the case is only
  // counted). Loops of those run in bursts that fit the ring, with pauses
  // the flusher drains it in (not timed): an unbroken loop of cheap calls
  // outruns the flusher, and dropping an event is cheaper than recording
  // it, which would be priced instead. Real programs record far slower.
  int ring_events_per_iteration = 0;
  // Costs each iteration also pays, measured by earlier cases: site, how
  // many times an iteration pays it.
  std::vector<std::pair<std::string, double>> subtract;
  // Profiling set-up of the profiled run(s).
  std::vector<std::string> rule_files;
  std::vector<std::string> simulator_patterns;
  bool cupti = false;
  std::string cupti_path;
  std::vector<std::string> environment;  // For both runs.
  // False for a cost no program here pays (CUPTI's on the fake runtime):
  // its doubt then warns only (calibration_verdict.h).
  bool matters = true;
  uint64_t iterations = 0;  // Set by sizing.
  uint64_t burst = 0;       // Iterations per burst; 0: one loop.
};

// Records per burst: half the ring (preload/thread_buffer.h), the point at
// which the flusher is woken anyway.
constexpr int kBurstRecords = 16000;
constexpr int kPauseMs = 5;
constexpr uint64_t kMaxBursts = 64;

struct Layout {
  fs::path bin, lib, share;
};

absl::StatusOr<Layout> FindLayout() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return absl::InternalError("cannot locate the rlscope executable");
  const fs::path prefix = self.parent_path().parent_path();
  return Layout{prefix / "bin", prefix / "lib", prefix / "share" / "rlscope"};
}

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
    } else if (option.name == "--calibration" || option.name == "--python" || option.name == "--repetitions") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) return UsageError("calibrate", std::string(value.status().message()));
      if (option.name == "--calibration") {
        options.path = fs::absolute(*value).string();
      } else if (option.name == "--python") {
        options.pythons.push_back(*value);
      } else {
        char* end = nullptr;
        const long n = strtol(value->c_str(), &end, 10);
        if (end == value->c_str() || *end != '\0' || n < 2 || n > 100) {
          return UsageError("calibrate", "--repetitions needs a whole number from 2 to 100, not '" + *value + "'");
        }
        options.repetitions = static_cast<int>(n);
      }
    } else {
      return UsageError("calibrate", "unknown option '" + option.name + "'");
    }
  }
  if (options.quick && options.repetitions == 5) options.repetitions = 2;
  return options;
}

// CaptureOutput: runs `command` (no shell) and returns its stdout, or
// nullopt when it cannot be run or fails.
std::optional<std::string> CaptureOutput(const std::vector<std::string>& command,
                                         const std::vector<std::string>& environment, const fs::path& scratch) {
  const std::string out = (scratch / "capture.out").string();
  UnprofiledRequest request;
  request.command = command;
  request.extra_environment = environment;
  request.give_terminal = false;
  request.stdin_path = "/dev/null";
  request.stdout_path = out;
  request.stderr_path = (scratch / "capture.err").string();
  absl::StatusOr<ProfileOutcome> ran = RunUnprofiled(request);
  if (!ran.ok() || ran->exit_code != 0) return std::nullopt;
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ListCases: the cases a workload (`command` --list) can run here; empty
// when it cannot be run.
std::vector<std::string> ListCases(std::vector<std::string> command, const std::vector<std::string>& environment,
                                   const fs::path& scratch) {
  command.push_back("--list");
  std::vector<std::string> cases;
  if (std::optional<std::string> list = CaptureOutput(command, environment, scratch)) {
    std::istringstream lines(*list);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) cases.push_back(line);
    }
  }
  return cases;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Progress: a status line on a terminal, one line per finished case
// otherwise (logs stay readable).
class Progress {
 public:
  explicit Progress(int total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  // Grow: `steps` more than planned (a cost measured again).
  void Grow(int steps) { total_ += steps; }
  void Step(const std::string& what) {
    ++done_;
    if (!tty_) return;
    const int width = 30, filled = total_ > 0 ? done_ * width / total_ : width;
    std::cerr << absl::StrFormat("\r  [%s%s] %3d%%  %-40s", std::string(filled, '#'), std::string(width - filled, '.'),
                                 total_ > 0 ? done_ * 100 / total_ : 100, what.substr(0, 40))
              << std::flush;
  }
  // CaseDone: a line of its own (a finished case, or news about one).
  void CaseDone(const std::string& line) {
    if (tty_) std::cerr << "\r" << std::string(80, ' ') << "\r";
    std::cerr << "  " << line << "\n";
  }

 private:
  int total_;
  int done_ = 0;
  bool tty_;
};

// A loop's time as a workload reported it.
struct LoopTime {
  double ns = 0;
  double kept_fraction = -1;  // UncontendedTimer's; -1 when not reported (start-up cases).
};

// DisturbanceSeam: the test seam RLSCOPE_CALIBRATE_TEST_DISTURB=SITE=NS
// (for tests only): repetition i of SITE (counted over all its rounds, from
// 0) has one side reported (i + 1) x NS per event slower, the baseline on
// even repetitions and the profiled side on odd ones: a machine ever
// busier, hitting either side. The least disturbed repetitions are then
// the first ones, whose differences disagree by more than they measure
// however often the site is measured again: the deterministic stand-in for
// a machine too busy to calibrate on.
constexpr char kTestDisturbEnv[] = "RLSCOPE_CALIBRATE_TEST_DISTURB";
struct DisturbanceSeam {
  std::string site;
  double ns_per_event = 0;
};
absl::StatusOr<DisturbanceSeam> ParseDisturbanceSeam(const char* setting) {
  DisturbanceSeam seam;
  if (setting == nullptr || *setting == '\0') return seam;
  const std::string text = setting;
  const size_t equals = text.rfind('=');
  char* end = nullptr;
  const double ns = equals == std::string::npos ? 0 : strtod(text.c_str() + equals + 1, &end);
  if (equals == std::string::npos || equals == 0 || end == text.c_str() + equals + 1 || *end != '\0' || ns <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s='%s' is not SITE=NS (NS > 0)", kTestDisturbEnv, text));
  }
  seam.site = text.substr(0, equals);
  seam.ns_per_event = ns;
  return seam;
}

class Sweep {
 public:
  Sweep(const CalibrateOptions& options, fs::path scratch, DisturbanceSeam seam)
      : options_(options), scratch_(std::move(scratch)), seam_(std::move(seam)) {}

  // Run: measures `cases` and stores their costs (or returns why one
  // could not be), in turns: one repetition of each case in order, then
  // the next, so that every cost's repetitions spread over the whole
  // sweep. Measured one case after the other, a cost rests on a few
  // seconds of the machine: where its speed wanders (a shared host runs
  // the same loop at two speeds from one moment to the next,
  // scripts/device/RESULTS.md), one cost lands in a slow stretch and the
  // next in a fast one, and a cost that subtracts another goes negative.
  // After each round the costs are computed in case order (later cases
  // subtract earlier ones); those in doubt (calibration::SiteDoubt) are
  // measured again, in turns among themselves, up to kExtraRounds more
  // rounds of as many repetitions; an estimate rests on all of its
  // repetitions (CostFromRepetitions). `between` runs after each turn.
  absl::Status Run(std::vector<Case> cases, Progress& progress, const std::function<void()>& between) {
    std::vector<Measuring> all;
    for (Case& c : cases) {
      if (absl::Status sized = Size(c); !sized.ok()) {
        return absl::Status(sized.code(), absl::StrCat(c.site, ": ", sized.message()));
      }
      Measuring m{std::move(c)};
      m.events =
          m.c.contrast == Contrast::kProcess ? 1 : static_cast<double>(m.c.iterations) * m.c.events_per_iteration;
      all.push_back(std::move(m));
    }
    std::vector<Measuring*> active;
    for (Measuring& m : all) active.push_back(&m);
    for (int round = 0; round <= cal::kExtraRounds && !active.empty(); ++round) {
      if (round > 0) {
        for (const Measuring* m : active) {
          progress.Grow(options_.repetitions * 2);
          progress.CaseDone(absl::StrFormat("%s: %s; measuring again (round %d of at most %d)", m->c.site,
                                            cal::SiteDoubt(sites_[m->c.site]), round + 1, cal::kExtraRounds + 1));
        }
      }
      for (int i = 0; i < options_.repetitions; ++i) {
        for (Measuring* m : active) {
          if (absl::Status measured = MeasureRepetition(*m, progress, i); !measured.ok()) return measured;
        }
        between();
      }
      for (Measuring* m : active) ++m->rounds;
      for (const Measuring& m : all) Settle(m);
      std::vector<Measuring*> doubtful;
      for (Measuring* m : active) {
        if (!cal::SiteDoubt(sites_[m->c.site]).empty()) doubtful.push_back(m);
      }
      active = std::move(doubtful);
    }
    for (const Measuring& m : all) progress.CaseDone(ResultLine(m.c));
    return absl::OkStatus();
  }

  double Cost(const std::string& site) const {
    auto it = sites_.find(site);
    return it == sites_.end() ? 0 : std::max(0.0, it->second.cost.ns);
  }
  const std::map<std::string, cal::SiteMeasurement, std::less<>>& sites() const { return sites_; }

 private:
  // Measuring: a case and the repetitions made of it so far.
  struct Measuring {
    Case c;
    double events = 0;
    std::vector<cal::Repetition> repetitions;
    std::vector<double> kept_fractions;
    int rounds = 0;
  };

  // MeasureRepetition: one repetition of `m`, both sides; which goes first
  // alternates, so a drifting machine biases neither side.
  absl::Status MeasureRepetition(Measuring& m, Progress& progress, int index_in_round) {
    const int rep = static_cast<int>(m.repetitions.size());
    cal::Repetition r;
    for (int half = 0; half < 2; ++half) {
      const bool measured_run = (half == 0) == (rep % 2 == 1);
      absl::StatusOr<LoopTime> loop = Measure(m.c, measured_run);
      if (!loop.ok()) return absl::Status(loop.status().code(), absl::StrCat(m.c.site, ": ", loop.status().message()));
      (measured_run ? r.measured_ns : r.base_ns) = loop->ns;
      if (loop->kept_fraction >= 0) m.kept_fractions.push_back(loop->kept_fraction);
      progress.Step(absl::StrFormat("%s %d/%d", m.c.site, index_in_round + 1, options_.repetitions));
    }
    if (m.c.site == seam_.site) {
      (rep % 2 == 1 ? r.measured_ns : r.base_ns) += (rep + 1) * seam_.ns_per_event * m.events;
    }
    m.repetitions.push_back(r);
    return absl::OkStatus();
  }

  // Settle: `m`'s cost from its repetitions so far, less what its
  // iterations also pay of the costs settled before it.
  void Settle(const Measuring& m) {
    double subtract_ns = 0;  // Per event: what the iteration also pays.
    for (const auto& [site, per_iteration] : m.c.subtract)
      subtract_ns += Cost(site) * per_iteration / m.c.events_per_iteration;
    cal::SiteMeasurement& site = sites_[m.c.site];
    site.matters = m.c.matters;
    site.rounds = m.rounds;
    site.cost = cal::CostFromRepetitions(m.repetitions, m.events, subtract_ns, static_cast<uint64_t>(m.events));
    site.kept_fraction = m.kept_fractions.empty() ? 1 : cal::Median(m.kept_fractions);
  }

  // ResultLine: a settled case's line: its cost, and what is wrong with it.
  std::string ResultLine(const Case& c) {
    const cal::SiteMeasurement& site = sites_[c.site];
    const cal::MeasuredCost& cost = site.cost;
    std::string line = c.contrast == Contrast::kProcess
                           ? absl::StrFormat("%-32s %10.3f ms  +- %.3f ms", c.site, cost.ns / 1e6, cost.spread_ns / 1e6)
                           : absl::StrFormat("%-32s %10.1f ns  +- %.1f ns  (%d events x %d)", c.site, cost.ns,
                                             cost.spread_ns, cost.events, cost.repetitions);
    // Never a negative or disputed figure printed as if it were fine.
    if (cal::Uncertain(cost)) {
      line += cost.spread_ns > std::max(std::abs(cost.ns), cal::kUncertainFloorNs)
                  ? "  UNCERTAIN: the repetitions disagree"
                  : "  UNCERTAIN: below zero past its spread";
    } else if (cost.ns < 0) {
      line += "  (below the noise: counts as 0)";
    }
    if (site.kept_fraction < cal::kMinKeptFraction) {
      line += absl::StrFormat("  LOW: its timer kept %.0f %% of the loops", 100 * site.kept_fraction);
    }
    if (site.rounds > 1) line += absl::StrFormat("  [%d rounds]", site.rounds);
    return line;
  }

  // Size: iterations so that the baseline loop takes about the target time
  // (long enough to dwarf timer and scheduling noise, short enough for a
  // sweep of minutes).
  absl::Status Size(Case& c) {
    if (c.contrast == Contrast::kProcess) {
      c.iterations = 0;
      return absl::OkStatus();
    }
    if (c.ring_events_per_iteration > 0) c.burst = std::max(1, kBurstRecords / c.ring_events_per_iteration);
    const uint64_t pilot = options_.quick ? 2000 : 20000;
    c.iterations = pilot;
    // Sized by the slower side, so a costly hook cannot make a run long.
    double slowest = 0;
    for (bool measured_run : {false, true}) {
      absl::StatusOr<LoopTime> loop = Measure(c, measured_run);
      if (!loop.ok()) return loop.status();
      slowest = std::max(slowest, loop->ns);
    }
    const double target_ns = options_.quick ? 20e6 : 150e6;
    const double per_iteration = std::max(slowest / static_cast<double>(pilot), 1.0);
    double iterations = std::clamp(target_ns / per_iteration, 1000.0, 20e6);
    if (c.burst > 0) iterations = std::min(iterations, static_cast<double>(c.burst * kMaxBursts));
    c.iterations = static_cast<uint64_t>(iterations);
    return absl::OkStatus();
  }

  // Measure: one run of `c` (its measured side, else its baseline side):
  // the workload's own loop time, or the command's wall time for
  // start-up cases.
  absl::StatusOr<LoopTime> Measure(const Case& c, bool measured_run) {
    std::vector<std::string> command = c.workload;
    command.push_back("--iterations");
    command.push_back(std::to_string(c.iterations));
    if (c.burst > 0 && c.iterations > c.burst) {
      command.insert(command.end(), {"--burst", std::to_string(c.burst), "--pause-ms", std::to_string(kPauseMs)});
    }
    const std::string out = (scratch_ / "workload.out").string();
    const std::string err = (scratch_ / "workload.err").string();
    const bool profiled = measured_run || c.contrast == Contrast::kCupti;
    absl::StatusOr<ProfileOutcome> outcome;
    if (!profiled) {
      UnprofiledRequest request;
      request.command = command;
      request.extra_environment = c.environment;
      request.give_terminal = false;
      request.stdin_path = "/dev/null";
      request.stdout_path = out;
      request.stderr_path = err;
      outcome = RunUnprofiled(request);
    } else {
      const fs::path run_dir = scratch_ / absl::StrFormat("run-%d", ++runs_);
      absl::StatusOr<std::string> prepared = PrepareRunDirectory(run_dir.string(), command);
      if (!prepared.ok()) return prepared.status();
      ProfileRequest request;
      request.command = command;
      request.run_dir = *prepared;
      request.rule_files = c.rule_files;
      request.simulator_patterns = c.simulator_patterns;
      request.cupti = c.contrast == Contrast::kCupti ? measured_run : c.cupti;
      request.cupti_path = c.cupti_path;
      request.sample_nvidia_smi = false;
      request.give_terminal = false;
      request.extra_environment = c.environment;
      // Native stack samples are timed by rlscope itself and removed
      // exactly (kMeasured); in a micro-loop they would also be priced into
      // its per-event cost, as their time over the loop's calls: removed
      // twice. Small where unwinding is cheap (here ~0.4 us a sample, one
      // per 25 calls of 40 us), not where it is slow. So the per-event
      // loops run without them; start-up keeps them, and what it measures
      // is net of them (RemovedByKnownCosts).
      if (c.contrast != Contrast::kProcess) request.extra_environment.push_back("RLSCOPE_STACK_INTERVAL_US=0");
      request.stdin_path = "/dev/null";
      request.stdout_path = out;
      request.stderr_path = err;
      request.log_prefix = "rlscope calibrate";
      request.apply_calibration = false;
      outcome = ProfileCommand(request);
      last_run_dir_ = run_dir;
    }
    if (!outcome.ok()) return outcome.status();
    if (outcome->interrupted_by != 0) return absl::CancelledError("interrupted");
    if (profiled && c.contrast == Contrast::kProcess && outcome->exit_code == 0) {
      // Start-up's cost is what the per-event costs measured so far do not
      // explain: the report of this very run removes those already.
      return LoopTime{static_cast<double>(outcome->wall_ns) - RemovedByKnownCosts(last_run_dir_)};
    }
    if (outcome->exit_code != 0) {
      std::ifstream in(err);
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      return absl::InternalError(absl::StrFormat("%s (%s) exited with status %d: %s", absl::StrJoin(command, " "),
                                                 profiled ? "profiled" : "unprofiled", outcome->exit_code,
                                                 Trimmed(text.substr(0, 2000))));
    }
    Forget();
    if (c.contrast == Contrast::kProcess) return LoopTime{static_cast<double>(outcome->wall_ns)};
    std::ifstream in(out);
    std::string line, last;
    while (std::getline(in, line)) {
      if (!line.empty()) last = line;
    }
    const nlohmann::json json = nlohmann::json::parse(last, nullptr, false);
    if (json.is_discarded() || !json.contains("elapsed_ns")) {
      return absl::InternalError(
          absl::StrFormat("%s printed no result line (got '%s')", absl::StrJoin(command, " "), last));
    }
    LoopTime loop{json["elapsed_ns"].get<double>()};
    if (auto kept = json.find("kept_fraction"); kept != json.end() && kept->is_number()) {
      loop.kept_fraction = kept->get<double>();
    }
    return loop;
  }

  // RemovedByKnownCosts: what the correction, with the costs measured so
  // far, removes from the first thread of the run in `run_dir`.
  double RemovedByKnownCosts(const fs::path& run_dir) {
    cal::OverheadModel partial;
    for (const auto& [site, measured] : sites_) partial.costs[site] = measured.cost;
    const std::string path = (scratch_ / "partial-calibration.json").string();
    double removed = 0;
    if (cal::WriteOverheadModel(path, partial).ok()) {
      absl::StatusOr<report::RunReport> analysed = report::LoadRunReport(run_dir.string(), path);
      if (analysed.ok() && analysed->corrected)
        removed = static_cast<double>(analysed->overhead.main_thread_removed_ns);
    }
    Forget();
    return removed;
  }
  // Forget: the last profiled run's directory (micro-loop traces are of no
  // further use).
  void Forget() {
    if (last_run_dir_.empty()) return;
    std::error_code error;
    fs::remove_all(last_run_dir_, error);
    last_run_dir_.clear();
  }

  const CalibrateOptions& options_;
  fs::path scratch_;
  fs::path last_run_dir_;
  int runs_ = 0;
  DisturbanceSeam seam_;
  std::map<std::string, cal::SiteMeasurement, std::less<>> sites_;
};

// The interpreters to calibrate, by MAJOR.MINOR version (first path wins).
std::map<std::string, std::string> PythonVersions(const std::vector<std::string>& requested, const fs::path& scratch,
                                                  std::vector<std::string>* problems) {
  std::vector<std::string> candidates = requested;
  if (candidates.empty()) candidates = {"python3", "/usr/bin/python3"};
  std::map<std::string, std::string> versions;
  for (const std::string& python : candidates) {
    // The interpreter itself, not a launcher script in front of it (pyenv's
    // shims run a shell and more under rlscope, which is not Python's cost).
    std::optional<std::string> answer =
        CaptureOutput({python, "-c", "import sys; print('%d.%d' % sys.version_info[:2], sys.executable)"}, {}, scratch);
    const std::string line = answer ? Trimmed(*answer) : "";
    const size_t space = line.find(' ');
    if (space == std::string::npos || space + 1 == line.size()) {
      if (!requested.empty() || python == "python3") problems->push_back(python + " could not be run");
      continue;
    }
    versions.emplace(line.substr(0, space), line.substr(space + 1));
  }
  return versions;
}

struct CudaSetup {
  bool available = false;
  bool fake = false;
  std::string runtime;  // For the fingerprint: "real 13000", "fake".
  std::vector<std::string> environment;
  std::string cupti_path;
  std::vector<std::string> cases;
};

CudaSetup FindCuda(const Layout& layout, const fs::path& scratch) {
  CudaSetup setup;
  const std::string binary = (layout.bin / "rlscope-calibrate-cuda").string();
  if (access(binary.c_str(), X_OK) != 0) return setup;  // Built without a CUDA toolkit.
  auto info = [&](const std::vector<std::string>& environment) -> std::optional<nlohmann::json> {
    std::optional<std::string> text = CaptureOutput({binary, "--info"}, environment, scratch);
    if (!text) return std::nullopt;
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || json.value("device_count", 0) < 1) return std::nullopt;
    return json;
  };
  std::optional<nlohmann::json> found = info({});
  if (found && found->value("runtime", "") == "real") {
    setup.runtime = absl::StrFormat("CUDA runtime %d, driver %d", found->value("runtime_version", 0),
                                    found->value("driver_version", 0));
  } else {
    // No GPU here: the hooks still cost what they cost; time them on the
    // fake runtime (and its fake CUPTI), which rlscope ships for this.
    const fs::path fake = layout.lib / "rlscope" / "fake_cuda";
    std::string library_path = fake.string();
    if (const char* existing = getenv("LD_LIBRARY_PATH"); existing != nullptr && *existing != '\0') {
      library_path += std::string(":") + existing;
    }
    setup.environment = {"LD_LIBRARY_PATH=" + library_path};
    setup.cupti_path = (fake / "cupti" / "libcupti.so.13").string();
    found = info(setup.environment);
    if (!found) return setup;
    setup.fake = true;
    setup.runtime = "fake (no GPU)";
  }
  setup.cases = ListCases({binary}, setup.environment, scratch);
  setup.available = !setup.cases.empty();
  return setup;
}

std::vector<Case> BuildCases(const Layout& layout, const CudaSetup& cuda, const std::vector<std::string>& native_cases,
                             const std::map<std::string, std::string>& pythons, const fs::path& scratch) {
  std::vector<Case> cases;
  const std::string native = (layout.bin / "rlscope-calibrate-native").string();
  const std::string sim_pattern = "*librlscope_calibrate_sim*:rlscope_calibrate_*";
  {
    Case c(std::string(cal::kTrampoline), {native, "--case", "trampoline"});
    c.simulator_patterns = {sim_pattern};
    c.ring_events_per_iteration = 1;
    cases.push_back(c);
    // Outer call recorded, inner one nested: minus the recorded one.
    Case nested(std::string(cal::kNestedHook), {native, "--case", "trampoline_nested"});
    nested.simulator_patterns = {sim_pattern};
    nested.subtract = {{std::string(cal::kTrampoline), 1}};
    nested.ring_events_per_iteration = 1;
    cases.push_back(nested);
  }
  if (cuda.available) {
    const std::string binary = (layout.bin / "rlscope-calibrate-cuda").string();
    auto has = [&](const std::string& name) {
      return std::find(cuda.cases.begin(), cuda.cases.end(), name) != cuda.cases.end();
    };
    // The hook alone (CUPTI off): a call the libcudart hook intercepts and
    // that is cheap on an idle stream.
    if (has("cudaStreamSynchronize")) {
      Case hook(std::string(cal::kCudaHook), {binary, "--case", "cudaStreamSynchronize"});
      hook.environment = cuda.environment;
      // On the fake, bare calls whatever the caller asked for: with CUPTI
      // off nothing runs inside the call's busy-wait, so the hook's cost
      // (~20 ns) is the same either way, but as the difference of two
      // loops of 40 us calls it drowns in their jitter (seen: 1.4 +- 4.1 us
      // where bare calls give 16-20 ns; every CUDA call of a corrected run
      // then lost about as much too many).
      if (cuda.fake) hook.environment.push_back("RLSCOPE_FAKE_CUDART_SCALE=0");
      hook.ring_events_per_iteration = 1;
      cases.push_back(hook);
    }
    // CUPTI's callbacks run only for these families (preload/cupti_injection.cc).
    for (const char* api :
         {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamSynchronize", "cuLaunchKernel"}) {
      if (!has(api)) continue;
      Case c(std::string(cal::kCuptiPrefix) + api, {binary, "--case", api}, Contrast::kCupti);
      c.environment = cuda.environment;
      c.cupti_path = cuda.cupti_path;
      c.matters = !cuda.fake;           // No program here pays the fake CUPTI's costs.
      c.ring_events_per_iteration = 3;  // The hooked call, CUPTI's view of it, a nested driver call.
      cases.push_back(c);
    }
  }
  if (std::find(native_cases.begin(), native_cases.end(), "nvtx_range") != native_cases.end()) {
    // Push and pop: two boundaries per iteration.
    Case nvtx(std::string(cal::kNvtxRange), {native, "--case", "nvtx_range"});
    nvtx.events_per_iteration = 2;
    nvtx.ring_events_per_iteration = 2;
    cases.push_back(nvtx);
  }
  const std::string script = (layout.share / "calibration" / "calibrate_python.py").string();
  const std::string rules = (layout.share / "calibration" / "calibrate.rules").string();
  for (const auto& [version_binding, python] : pythons) {
    // A copy: clang < 16 cannot capture a structured binding in a lambda.
    const std::string& version = version_binding;
    auto site = [&](std::string_view name) { return cal::PythonSite(name, version); };
    // The cases this interpreter can run (one whose every C function lives
    // inside the interpreter has no transition to price, nor any to make).
    const std::vector<std::string> available = ListCases({python, script}, {}, scratch);
    auto can = [&](std::string_view name) {
      return std::find(available.begin(), available.end(), name) != available.end();
    };
    // Per-call costs include the slowdown of the loop's own few bytecodes
    // (CPython 3.11 runs all bytecode slower while a profile function is
    // set; see calibration/README.md for why that is not modelled apart).
    // python_call_site (3.12+) before python_call, whose calls are also
    // seen at their site: priced apart, it is subtracted there.
    for (std::string_view name :
         {cal::kPythonCallSite, cal::kPythonCall, cal::kPythonBuiltin, cal::kPythonTransition}) {
      if (!can(name)) continue;
      Case c(site(name), {python, script, "--case", std::string(name)});
      c.ring_events_per_iteration = name == cal::kPythonTransition ? 1 : 0;
      if (name == cal::kPythonCall && can(cal::kPythonCallSite)) {
        c.subtract = {{site(cal::kPythonCallSite), 1}};
      }
      cases.push_back(c);
    }
    if (!can("python_operation")) continue;
    // Each iteration is a Python call too, and two boundaries.
    Case operation(site(cal::kPythonOperation), {python, script, "--case", "python_operation"});
    operation.events_per_iteration = 2;
    operation.subtract = {{site(cal::kPythonCall), 1}};
    if (can(cal::kPythonCallSite)) operation.subtract.push_back({site(cal::kPythonCallSite), 1});
    operation.ring_events_per_iteration = 2;
    operation.rule_files = {rules};
    cases.push_back(operation);
  }
  // Start-up last: its cost is the rest the per-event costs leave.
  cases.push_back(Case(std::string(cal::kNativeProcess), {native, "--case", "process"}, Contrast::kProcess));
  for (const auto& [version, python] : pythons) {
    cases.push_back(
        Case(cal::PythonSite(cal::kPythonProcess, version), {python, script, "--case", "process"}, Contrast::kProcess));
  }
  return cases;
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
  absl::StatusOr<Layout> layout = FindLayout();
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
  const std::map<std::string, std::string> pythons = PythonVersions(options->pythons, scratch, &problems);
  for (const std::string& problem : problems) std::cerr << "rlscope calibrate: warning: " << problem << "\n";
  if (!options->pythons.empty() && pythons.size() < options->pythons.size()) {
    std::cerr << "rlscope calibrate: not every --python could be run; nothing written\n";
    return 1;
  }
  const CudaSetup cuda = FindCuda(*layout, scratch);
  model.fingerprint.cuda_runtime = cuda.available ? cuda.runtime : "none";
  const std::vector<std::string> native_cases =
      ListCases({(layout->bin / "rlscope-calibrate-native").string()}, {}, scratch);
  if (native_cases.empty()) {
    std::cerr << "rlscope calibrate: " << (layout->bin / "rlscope-calibrate-native").string()
              << " cannot be run: is the build complete?\n";
    return 1;
  }
  std::vector<Case> cases = BuildCases(*layout, cuda, native_cases, pythons, scratch);

  std::cerr << absl::StrFormat("rlscope calibrate: %s; %s; CUDA: %s; Python: %s\n", model.fingerprint.cpu,
                               model.fingerprint.gpu == "none" ? "no GPU" : model.fingerprint.gpu,
                               cuda.available ? cuda.runtime : "not calibrated (no rlscope-calibrate-cuda or runtime)",
                               pythons.empty() ? "none" : absl::StrJoin(pythons, ", ", absl::PairFormatter(" ")));
  std::cerr << absl::StrFormat("  %d costs x %d repetitions, each an unprofiled and a profiled run\n", cases.size(),
                               options->repetitions);
  // Test seams (contention.h, DisturbanceSeam): malformed is an error
  // before anything is measured.
  absl::StatusOr<DisturbanceSeam> seam = ParseDisturbanceSeam(getenv(kTestDisturbEnv));
  cal::ContentionFigures injected;
  const char* injected_setting = getenv(cal::kTestContentionEnv);
  absl::Status injected_ok = cal::ApplyTestContention(injected_setting ? injected_setting : "", injected);
  if (!seam.ok() || !injected_ok.ok()) {
    std::cerr << "rlscope calibrate: " << (!seam.ok() ? seam.status() : injected_ok).message() << "\n";
    return 2;
  }

  Progress progress(static_cast<int>(cases.size()) * options->repetitions * 2);
  Sweep sweep(*options, scratch, *seam);
  const cal::ContentionSnapshot before = cal::Snapshot();
  double load_max = before.load_average;
  // The per-event costs in turns; then start-up, one case after the
  // other: each is the rest that the costs settled before it leave.
  std::vector<std::vector<Case>> groups(1);
  for (Case& c : cases) {
    if (c.contrast == Contrast::kProcess) {
      groups.push_back({std::move(c)});
    } else {
      groups.front().push_back(std::move(c));
    }
  }
  for (std::vector<Case>& group : groups) {
    if (group.empty()) continue;
    absl::Status status =
        sweep.Run(std::move(group), progress, [&] { load_max = std::max(load_max, cal::ReadLoadAverage()); });
    if (!status.ok()) {
      std::cerr << "\nrlscope calibrate: measuring " << status.message() << "\nnothing was written.\n";
      return absl::IsCancelled(status) ? 130 : 1;
    }
  }
  cal::ContentionFigures contention = cal::Between(before, cal::Snapshot());
  contention.load_average_max = std::max(contention.load_average_max, load_max);
  for (const auto& [site, measured] : sweep.sites()) {
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

  const cal::Verdict verdict = cal::JudgeCalibration(sweep.sites(), contention);
  for (const auto& [site, measured] : sweep.sites()) {
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
