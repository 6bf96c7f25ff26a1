#include "collector/calibration_sweep.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration/overhead_model.h"
#include "collector/profiled_run.h"
#include "collector/run_directory.h"
#include "nlohmann/json.hpp"
#include "report/run_loader.h"
#include "report/run_report.h"

namespace rlscope::collector::calibrate {

namespace fs = std::filesystem;
namespace cal = rlscope::calibration;

Progress::Progress(int total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::Step(const std::string& what) {
  ++done_;
  if (!tty_) return;
  const int width = 30, filled = total_ > 0 ? done_ * width / total_ : width;
  std::cerr << absl::StrFormat("\r  [%s%s] %3d%%  %-40s", std::string(filled, '#'), std::string(width - filled, '.'),
                               total_ > 0 ? done_ * 100 / total_ : 100, what.substr(0, 40))
            << std::flush;
}

void Progress::CaseDone(const std::string& line) {
  if (tty_) std::cerr << "\r" << std::string(80, ' ') << "\r";
  std::cerr << "  " << line << "\n";
}

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

namespace {

// Records per burst: half the ring (preload/thread_buffer.h), the point at
// which the flusher is woken anyway.
constexpr int kBurstRecords = 16000;
constexpr int kPauseMs = 5;
constexpr uint64_t kMaxBursts = 64;

// A loop's time as a workload reported it.
struct LoopTime {
  double ns = 0;
  double kept_fraction = -1;  // UncontendedTimer's; -1 when not reported (start-up cases).
};

class Sweep {
 public:
  Sweep(const SweepSettings& options, fs::path scratch, DisturbanceSeam seam)
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
        return absl::Status(sized.code(), absl::StrCat(c.site, " failed: ", sized.message()));
      }
      Measuring m{std::move(c), 0, {}, {}, 0};
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
                                            cal::SiteDoubt(sites_[m->c.site]), m->rounds + 1, cal::kExtraRounds + 1));
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
      // From all, not only those just measured: a cost that settled may
      // fall into doubt when one it subtracts was measured again.
      std::vector<Measuring*> doubtful;
      for (Measuring& m : all) {
        if (m.rounds <= cal::kExtraRounds && !cal::SiteDoubt(sites_[m.c.site]).empty()) doubtful.push_back(&m);
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
      if (!loop.ok()) {
        return absl::Status(loop.status().code(), absl::StrCat(m.c.site, " failed: ", loop.status().message()));
      }
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
    // The loop's call speed is kept for CUPTI's costs on a real GPU only
    // (report/cupti_call_speed.h): the fake CUPTI waits a fixed time
    // whatever the caches, so its calls' speed says nothing of its cost.
    if (m.c.contrast != Contrast::kCupti || !m.c.matters) site.cost.loop_ns = 0;
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
  // far, removes from the first thread of the run in `run_dir`, at their
  // prices: the loops' timers set aside the time they waited for a CPU,
  // so the threads' waits (report/cpu_contention.h) must not scale them.
  double RemovedByKnownCosts(const fs::path& run_dir) {
    cal::OverheadModel partial;
    for (const auto& [site, measured] : sites_) partial.costs[site] = measured.cost;
    double removed = 0;
    if (absl::StatusOr<report::DecodedRun> run = report::LoadRun(run_dir.string(), {.for_correction = true});
        run.ok()) {
      for (report::ProcessTimeline& process : run->processes) {
        for (report::ThreadTimeline& thread : process.threads) thread.cpu_waits.clear();
      }
      report::AnalysisOptions options;
      options.model = &partial;
      const report::RunReport analysed = report::AnalyseRun(*std::move(run), options);
      if (analysed.corrected) removed = static_cast<double>(analysed.overhead.main_thread_removed_ns);
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

  const SweepSettings& options_;
  fs::path scratch_;
  fs::path last_run_dir_;
  int runs_ = 0;
  DisturbanceSeam seam_;
  std::map<std::string, cal::SiteMeasurement, std::less<>> sites_;
};

}  // namespace

absl::StatusOr<SiteMeasurements> RunSweep(std::vector<Case> cases, const SweepSettings& settings,
                                          const fs::path& scratch, const DisturbanceSeam& seam, Progress& progress,
                                          const std::function<void()>& between) {
  Sweep sweep(settings, scratch, seam);
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
    if (absl::Status status = sweep.Run(std::move(group), progress, between); !status.ok()) return status;
  }
  return sweep.sites();
}

}  // namespace rlscope::collector::calibrate
