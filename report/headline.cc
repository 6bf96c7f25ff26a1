#include "report/headline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/launcher_processes.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

// ValueOr0: map[key], 0 when absent.
template <typename Map, typename Key>
int64_t ValueOr0(const Map& map, const Key& key) {
  const auto found = map.find(key);
  return found == map.end() ? int64_t{0} : static_cast<int64_t>(found->second);
}

// LevelName: a category as a sentence names it.
std::string LevelName(Category category) {
  switch (category) {
    case Category::kPython: return "Python (the interpreter)";
    case Category::kBackend: return "the ML backend";
    case Category::kSimulator: return "the simulator";
    case Category::kCudaApi: return "CUDA API calls";
    case Category::kNative: return "other native code";
    case Category::kCommunication: return "communication between ranks";
    default: return std::string(CategoryName(category));
  }
}

double Share(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0; }

// Percent: a share as a sentence gives it: "62%", one decimal under 10 %
// ("0.3%"), so that a small share does not read as none.
std::string Percent(int64_t part, int64_t whole) {
  const double share = Share(part, whole);
  return share < 10 ? absl::StrFormat("%.1f%%", share) : absl::StrFormat("%.0f%%", share);
}

constexpr char kNoOperation[] = "(none)";

// Figures: the CPU thread time of the run, by operation and category.
struct Figures {
  int64_t total_ns = 0;
  int64_t loop_ns = 0;
  int64_t startup_ns = 0;
  int64_t launcher_ns = 0;                      // Launcher processes' (launcher_processes.h).
  std::map<std::string, int64_t> operation_ns;  // The loop's operations.
  std::map<std::string, std::map<Category, int64_t>> operation_levels;
  std::map<Category, int64_t> loop_levels;
};

Figures FiguresOf(const RunReport& report) {
  Figures figures;
  for (const BreakdownRow& row : report.rows) {
    if (row.resource == Resource::kGpu || row.category == Category::kWait) continue;
    figures.total_ns += row.ns;
    if (row.operation == "startup") figures.startup_ns += row.ns;
    if (row.operation == kLauncherOperation) figures.launcher_ns += row.ns;
    if (OutsideTheLoop(row.operation)) continue;
    figures.loop_ns += row.ns;
    figures.operation_ns[row.operation] += row.ns;
    figures.operation_levels[row.operation][row.category] += row.ns;
    figures.loop_levels[row.category] += row.ns;
  }
  return figures;
}

template <typename Key>
std::pair<Key, int64_t> Largest(const std::map<Key, int64_t>& values) {
  std::pair<Key, int64_t> largest{};
  for (const auto& [key, ns] : values) {
    if (ns > largest.second) largest = {key, ns};
  }
  return largest;
}

// TopUserLine: the user's own line that caused the most native time in
// the loop, over every process.
const LineRow* TopUserLine(const RunReport& report) {
  const LineRow* top = nullptr;
  for (const ProcessReport& process : report.processes) {
    for (const LineRow& line : process.python_lines) {
      if (!line.user_code || OutsideTheLoop(line.operation) || line.outer_ns <= 0) continue;
      if (top == nullptr || line.outer_ns > top->outer_ns) top = &line;
    }
  }
  return top;
}

struct Step {
  double weight = 0;  // The share it is about: the larger first.
  std::string text;
};

// SmallKernelsStep: the loop operation whose GPU work is launched in the
// most kernels per instance while the GPU sat mostly idle during it: at
// least kManyKernels kernels per instance, the GPU busy under half of the
// operation's time, and the operation at least 10 % of the loop. Such an
// operation is bound by launching, not by the GPU: fewer, larger launches
// (batching) or one captured launch (CUDA graphs, torch.compile, jax.jit)
// are the remedy.
std::optional<Step> SmallKernelsStep(const RunReport& report, const Figures& figures) {
  constexpr double kManyKernels = 5;
  struct Gpu {
    uint64_t kernels = 0;
    int64_t kernel_ns = 0, wall_ns = 0, busy_ns = 0;
    uint64_t instances = 0;
  };
  std::map<std::string, Gpu> operations;
  for (const ProcessReport& process : report.processes) {
    for (const OperationGpuRow& row : process.gpu.operations) {
      if (OutsideTheLoop(row.operation) || row.operation == kNoOperation) continue;
      Gpu& gpu = operations[row.operation];
      gpu.kernels += row.kernels;
      gpu.kernel_ns += row.kernel_ns;
      gpu.wall_ns += row.wall_ns;
      gpu.busy_ns += row.gpu_busy_ns;
    }
  }
  for (const ProcessReport& process : report.processes) {
    for (auto& [name, gpu] : operations) gpu.instances += ValueOr0(process.operation_instances, name);
  }
  std::optional<Step> step;
  for (const auto& [name, gpu] : operations) {
    if (gpu.instances == 0 || gpu.wall_ns <= 0) continue;
    const double per_instance = static_cast<double>(gpu.kernels) / static_cast<double>(gpu.instances);
    const double share = Share(ValueOr0(figures.operation_ns, name), figures.loop_ns);
    const double busy = Share(gpu.busy_ns, gpu.wall_ns);
    if (per_instance < kManyKernels || busy >= 50 || share < 10) continue;
    if (step.has_value() && step->weight >= share) continue;
    step = Step{share, absl::StrFormat("%s launches %.0f kernels per instance for %s of GPU time, and the GPU is "
                                       "busy %.0f%% of its time: batch it (more environments or samples per call), "
                                       "or launch it as one (CUDA graphs, torch.compile, jax.jit).",
                                       name, per_instance,
                                       FormatDuration(gpu.kernel_ns / static_cast<int64_t>(gpu.instances)), busy)};
    if (!step->text.empty()) step->text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(step->text[0])));
  }
  return step;
}

std::vector<Step> NextSteps(const RunReport& report, const Figures& figures) {
  std::vector<Step> steps;
  const double startup = Share(figures.startup_ns, figures.total_ns);
  if (startup >= 50) {
    steps.push_back(
        {startup, absl::StrFormat("Start-up is %.0f%% of this run's thread time: profile more steps, so that "
                                  "the loop's figures are those of a real training run.",
                                  startup)});
  }
  auto level_of = [&](const std::string& operation, Category category) {
    const auto found = figures.operation_levels.find(operation);
    return found == figures.operation_levels.end() ? int64_t{0} : ValueOr0(found->second, category);
  };
  auto operation_ns = [&](const std::string& operation) { return ValueOr0(figures.operation_ns, operation); };
  const double simulation = Share(operation_ns("simulation"), figures.loop_ns);
  const double simulation_python = Share(level_of("simulation", Category::kPython), operation_ns("simulation"));
  if (simulation >= 40 && simulation_python >= 50) {
    steps.push_back({simulation, absl::StrFormat("Simulation is %.0f%% of the loop, %.0f%% of it Python: step many "
                                                 "environments per call (a vectorised environment) or move the "
                                                 "environment's step into compiled code.",
                                                 simulation, simulation_python)});
  }
  const int64_t inference_ns = operation_ns("inference");
  const double inference = Share(inference_ns, figures.loop_ns);
  const double inference_overhead =
      Share(level_of("inference", Category::kPython) + level_of("inference", Category::kCudaApi), inference_ns);
  if (inference >= 25 && inference_overhead >= 50) {
    steps.push_back({inference, absl::StrFormat("Inference is %.0f%% of the loop, %.0f%% of it Python and CUDA API "
                                                "calls rather than compute: act for many environments per forward "
                                                "pass, or compile acting (torch.compile, CUDA graphs, jax.jit).",
                                                inference, inference_overhead)});
  }
  const auto loop_level = [&](Category category) { return ValueOr0(figures.loop_levels, category); };
  const double cuda_api = Share(loop_level(Category::kCudaApi), figures.loop_ns);
  if (cuda_api >= 20) {
    steps.push_back({cuda_api, absl::StrFormat("CUDA API calls are %.0f%% of the loop: launch fewer, larger kernels "
                                               "(larger batches, fused operations, CUDA graphs).",
                                               cuda_api)});
  }
  const double python = Share(loop_level(Category::kPython), figures.loop_ns);
  if (python >= 60 && simulation_python < 50) {
    steps.push_back({python, absl::StrFormat("Python itself is %.0f%% of the loop, more than the work it drives: "
                                             "larger batches per call, or compiled steps, leave it less to do.",
                                             python)});
  }
  if (std::optional<Step> gpu = SmallKernelsStep(report, figures); gpu.has_value()) steps.push_back(std::move(*gpu));
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.weight > b.weight; });
  if (steps.size() > 2) steps.resize(2);
  return steps;
}

std::string CorrectionLine(const RunReport& report) {
  if (!report.corrected) {
    std::string why = report.correction_message;
    if (why.rfind("uncorrected: ", 0) == 0) why = why.substr(13);
    return "Not corrected for rlscope's overhead: " + (why.empty() ? std::string("no calibration was given") : why);
  }
  std::string line = "Corrected for rlscope's overhead";
  if (report.corrected_wall_ns.has_value() && *report.corrected_wall_ns > 0 && report.metadata.wall_ns > 0) {
    line += absl::StrFormat(
        ": about %s without rlscope (+- %s; profiled %s, %.2fx)", FormatDuration(*report.corrected_wall_ns),
        FormatDuration(report.corrected_wall_spread_ns), FormatDuration(report.metadata.wall_ns),
        static_cast<double>(report.metadata.wall_ns) / static_cast<double>(*report.corrected_wall_ns));
  }
  if (report.windowed)
    line +=
        " inside the capture windows (no estimate of the whole run's wall time: rlscope's cost outside them was not "
        "measured)";
  if (!report.calibration_quality.verdict.empty()) line += "; calibration " + report.calibration_quality.verdict;
  return line + " (details at the end).";
}

// CaptureFinding: what part of the run a windowed report describes.
std::string CaptureFinding(const RunReport& report) {
  const std::string steps = report.whole_run_steps > 0
                                ? absl::StrFormat(" (%s of the run's %s environment steps)", FormatCount(report.steps),
                                                  FormatCount(report.whole_run_steps))
                                : "";
  if (report.capture_windows.empty()) {
    const RunMetadata& run = report.metadata;
    const std::string run_steps = report.whole_run_steps > 0 ? absl::StrFormat("; the run took %s environment steps",
                                                                               FormatCount(report.whole_run_steps))
                                                             : "";
    // A --delay the run ended before is no error: say so plainly.
    if (run.capture_delay_ns > 0 && run.wall_ns > 0 && run.wall_ns <= run.capture_delay_ns) {
      return absl::StrFormat(
          "Capture never opened: the run ended after %s, before its --delay of %s (%s), so nothing but operation "
          "boundaries was recorded%s. Profile again with a shorter --delay.",
          FormatDuration(run.wall_ns), FormatDuration(run.capture_delay_ns), run.capture_request, run_steps);
    }
    const std::string why = !run.capture_request.empty()
                                ? absl::StrFormat("%s asked for a window the run never reached", run.capture_request)
                                : "--delay beyond the run's end, rlscope.start() never called, or no capture "
                                  "signal sent";
    return absl::StrFormat(
        "Capture never opened: no window was captured (%s), so nothing but operation boundaries was recorded%s.", why,
        run_steps);
  }
  const size_t windows = report.capture_windows.size();
  std::string finding = absl::StrFormat("Only %s of the run was captured, in %d window%s%s: every figure below is %s.",
                                        FormatDuration(report.captured_ns), windows, windows == 1 ? "" : "s", steps,
                                        windows == 1 ? "the window's" : "the windows'");
  int64_t estimated_ns = 0;
  for (const RunReport::Estimate& estimate : report.whole_run_estimate) {
    if (!OutsideTheLoop(estimate.operation)) estimated_ns += estimate.estimated_ns;
  }
  if (estimated_ns > 0) {
    absl::StrAppend(&finding, " Estimated for the whole run, its loop takes about ", FormatDuration(estimated_ns),
                    " of thread time (the window's time per operation instance times the run's instances).");
  }
  return finding;
}

// StragglerFinding: the rank the others waited for in a job's collectives,
// when it arrived last at most of them and their wait was worth telling
// (at least a tenth of their Communication time); "" otherwise.
std::string StragglerFinding(const JobReport& job) {
  const JobReport::Communication& talk = job.communication;
  if (!talk.lined_up || job.ranks.size() < 2) return "";
  const size_t last = static_cast<size_t>(std::max_element(talk.per_rank_last.begin(), talk.per_rank_last.end()) -
                                          talk.per_rank_last.begin());
  if (2 * talk.per_rank_last[last] <= talk.collectives) return "";
  int64_t others_wait = 0, others_ns = 0;
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    if (r == last) continue;
    others_wait += talk.per_rank_wait_ns[r];
    others_ns += talk.per_rank_ns[r];
  }
  if (others_ns <= 0 || 10 * others_wait < others_ns) return "";
  const int64_t others = static_cast<int64_t>(job.ranks.size()) - 1;
  return absl::StrFormat(
      "Rank %d of the %d-rank job is its straggler: the last to arrive at %s of %s collectives; the other ranks "
      "waited %s each on average for the last to arrive (%s of their communication time).",
      job.ranks[last].rank, job.ranks.size(), FormatCount(talk.per_rank_last[last]), FormatCount(talk.collectives),
      FormatDuration(others_wait / others), Percent(others_wait, others_ns));
}

}  // namespace

bool OutsideTheLoop(const std::string& operation) {
  return operation == "startup" || operation == "teardown" || operation == kLauncherOperation;
}

int64_t LoopThreadNs(const RunReport& report) { return FiguresOf(report).loop_ns; }

Headline MakeHeadline(const RunReport& report) {
  Headline headline;
  if (report.windowed) headline.findings.push_back(CaptureFinding(report));
  const Figures figures = FiguresOf(report);
  if (figures.total_ns <= 0) {
    headline.findings.push_back("No thread time was recorded: nothing to break down.");
  } else if (figures.loop_ns <= 0) {
    headline.findings.push_back(absl::StrFormat(
        "All %s of thread time is %s: no training loop ran long enough to show.", FormatDuration(figures.total_ns),
        figures.launcher_ns > 0 ? "start-up, teardown and launcher processes" : "start-up and teardown"));
  } else {
    // What the loop leaves out, as the findings say it.
    const char* aside =
        figures.launcher_ns > 0 ? "start-up, teardown and launcher processes aside" : "start-up and teardown aside";
    const auto [operation, operation_ns] = Largest(figures.operation_ns);
    const auto [level, level_ns] = Largest(figures.operation_levels.at(operation));
    if (operation == kNoOperation) {
      // Time no operation covers is not an answer: say so, and where the
      // report explains it.
      headline.findings.push_back(absl::StrFormat(
          "%s of the training loop is in no operation, (none) (%s of %s; %s), %s of it in %s: the report lists the "
          "functions it was spent in and the rule lines that would name them.",
          Percent(operation_ns, figures.loop_ns), FormatDuration(operation_ns), FormatDuration(figures.loop_ns), aside,
          Percent(level_ns, operation_ns), LevelName(level)));
    } else {
      std::string name = operation;
      if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
      headline.findings.push_back(absl::StrFormat("%s is %s of the training loop (%s of %s; %s), %s of it in %s.", name,
                                                  Percent(operation_ns, figures.loop_ns), FormatDuration(operation_ns),
                                                  FormatDuration(figures.loop_ns), aside,
                                                  Percent(level_ns, operation_ns), LevelName(level)));
    }
    const std::vector<std::pair<Category, int64_t>> levels = LevelsLargestFirst(figures.loop_levels);
    std::string by_level = "By level, the loop is";
    for (size_t i = 0; i < levels.size() && i < 3; ++i) {
      by_level += absl::StrFormat("%s %s %s", i == 0 ? "" : ",", CategoryName(levels[i].first),
                                  Percent(levels[i].second, figures.loop_ns));
    }
    headline.findings.push_back(by_level + ".");
    if (report.steps > 0) {
      const auto steps = static_cast<int64_t>(report.steps);
      std::string per_step = absl::StrFormat("One environment step takes %s of the loop's thread time (%s steps",
                                             FormatDuration(figures.loop_ns / steps), FormatCount(report.steps));
      if (const int64_t simulation_ns = ValueOr0(figures.operation_ns, std::string(kStepOperation));
          simulation_ns > 0) {
        absl::StrAppend(&per_step, "; the step itself ", FormatDuration(simulation_ns / steps), " of it");
      }
      headline.findings.push_back(per_step + ").");
    }
  }
  // A windowed run's GPU work is the windows': so is the time it is of.
  const int64_t wall_ns = report.windowed ? report.captured_ns : report.metadata.wall_ns;
  if (report.gpu_busy_ns > 0 && wall_ns > 0) {
    headline.findings.push_back(absl::StrFormat("The GPU was busy %s of the %s %s wall time (%s).",
                                                FormatDuration(report.gpu_busy_ns),
                                                report.windowed ? "captured windows'" : "run's",
                                                FormatDuration(wall_ns), Percent(report.gpu_busy_ns, wall_ns)));
  } else if (report.gpu_busy_ns <= 0) {
    headline.findings.push_back("No GPU work was recorded.");
  }
  if (const LineRow* line = TopUserLine(report); line != nullptr) {
    headline.findings.push_back(absl::StrFormat("Your most expensive line: %s (%s of native time, in %s).",
                                                FormatLine(*line), FormatDuration(line->outer_ns), line->operation));
  }
  for (const JobReport& job : report.jobs) {
    if (std::string straggler = StragglerFinding(job); !straggler.empty()) {
      headline.findings.push_back(std::move(straggler));
    }
  }
  for (Step& step : NextSteps(report, figures)) headline.next_steps.push_back(std::move(step.text));
  headline.correction = CorrectionLine(report);
  return headline;
}

}  // namespace rlscope::report
