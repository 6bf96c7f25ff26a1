#include "report/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/launcher_processes.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

using LevelPair = std::pair<Category, Category>;

// One run's rows and transitions, summed over processes.
struct RunTotals {
  std::map<std::string, std::map<Category, int64_t>> cpu, gpu;  // operation -> category -> ns
  std::map<std::string, int64_t> operation_cpu, operation_gpu;
  std::map<std::string, std::map<LevelPair, uint64_t>> transitions;
  std::map<std::string, uint64_t> instances;
  int64_t thread_ns = 0, gpu_ns = 0;
  bool gpu_captured = false;
};

RunTotals Tally(const RunReport& report) {
  RunTotals totals;
  for (const BreakdownRow& row : report.rows) {
    if (row.resource == Resource::kGpu) {
      totals.gpu[row.operation][row.category] += row.ns;
      totals.operation_gpu[row.operation] += row.ns;
      totals.gpu_ns += row.ns;
    } else {
      totals.cpu[row.operation][row.category] += row.ns;
      totals.operation_cpu[row.operation] += row.ns;
      totals.thread_ns += row.ns;
    }
  }
  for (const ProcessReport& process : report.processes) {
    if (process.gpu.status == "captured" || process.gpu.status == "degraded") totals.gpu_captured = true;
    for (const TransitionRow& row : process.transitions) {
      totals.transitions[row.operation][{row.from, row.to}] += row.count;
    }
    // The analysis's count, with or without transitions (a transition row
    // repeats it for its operation).
    for (const auto& [operation, n] : process.operation_instances) totals.instances[operation] += n;
  }
  return totals;
}

template <typename Map, typename Key>
std::optional<double> Lookup(const Map& map, const Key& key) {
  const auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  return static_cast<double>(it->second);
}

std::optional<double> ShareOf(std::optional<double> value, int64_t whole) {
  if (!value.has_value() || whole <= 0) return std::nullopt;
  return *value / static_cast<double>(whole);
}

// MakeValues: `value(i)` for each run, shares against `whole(i)` when given.
template <typename ValueFn>
DiffValues MakeValues(size_t runs, bool integral, ValueFn value, const std::vector<int64_t>* wholes = nullptr) {
  DiffValues out;
  out.integral = integral;
  for (size_t i = 0; i < runs; ++i) {
    out.values.push_back(value(i));
    if (wholes != nullptr) out.shares.push_back(ShareOf(out.values.back(), (*wholes)[i]));
  }
  for (size_t i = 0; i < runs; ++i) out.changes.push_back(CompareValues(out.values[0], out.values[i]));
  return out;
}

std::string Basename(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && path.size() > 1) path = path.substr(slash + 1);
  return path.empty() ? "." : path;
}

// DivideBySteps: `values` divided by each run's steps, the changes recomputed.
void DivideBySteps(DiffValues& values, const DiffValues& steps) {
  for (size_t i = 0; i < values.values.size(); ++i) {
    if (!values.values[i].has_value()) continue;
    values.values[i] =
        steps.values[i].has_value() ? std::optional<double>(*values.values[i] / *steps.values[i]) : std::nullopt;
    if (!values.values[i].has_value() && !values.shares.empty()) values.shares[i] = std::nullopt;
  }
  values.integral = false;
  for (size_t i = 0; i < values.values.size(); ++i)
    values.changes[i] = CompareValues(values.values[0], values.values[i]);
}

// Verdicts: every time's changes judged (Verdict), once the values are final.
void JudgeChanges(DiffValues& values) {
  if (!values.is_time) return;
  for (size_t i = 1; i < values.changes.size(); ++i) {
    Change& change = values.changes[i];
    change.verdict = Verdict::kSame;
    if (change.status != ChangeStatus::kBoth || !change.ratio.has_value()) continue;
    if (!values.shares.empty()) {
      const double share = std::max(values.shares[0].value_or(0), values.shares[i].value_or(0));
      if (share < kVerdictShare) continue;
    }
    if (*change.ratio >= kVerdictRatio) change.verdict = Verdict::kWorse;
    if (*change.ratio <= 1 / kVerdictRatio) change.verdict = Verdict::kBetter;
  }
}

// Per step, start-up and teardown (and the totals holding them) shrink
// with the run's length whatever the code does: not judged then.
void JudgeChanges(RunDiff& diff) {
  if (!diff.per_step) {
    for (DiffValues* values : {&diff.total_wall, &diff.thread_time, &diff.gpu_time, &diff.wall_per_step}) {
      JudgeChanges(*values);
    }
  }
  for (DiffOperation& op : diff.operations) {
    if (diff.per_step && (op.name == "startup" || op.name == "teardown" || op.name == kLauncherOperation)) continue;
    JudgeChanges(op.cpu_time);
    JudgeChanges(op.gpu_time);
    for (DiffCategory& category : op.categories) JudgeChanges(category.time);
  }
}

void MarkTimes(RunDiff& diff) {
  for (DiffValues* values : {&diff.total_wall, &diff.thread_time, &diff.gpu_time, &diff.wall_per_step}) {
    values->is_time = true;
  }
  for (DiffOperation& op : diff.operations) {
    op.cpu_time.is_time = true;
    op.gpu_time.is_time = true;
    for (DiffCategory& category : op.categories) category.time.is_time = true;
  }
}

// PerStepWhy: why times are per step ("" when they are not).
std::string PerStepWhy(const RunDiff& diff, PerStep per_step) {
  if (per_step == PerStep::kOff) return "";
  if (per_step == PerStep::kOn) return "asked for (--per-step)";
  const std::vector<std::optional<double>>& steps = diff.steps.values;
  if (steps.size() < 2) return "";
  for (const std::optional<double>& count : steps) {
    if (!count.has_value()) return "";
  }
  std::vector<std::string> counts;
  bool differ = false;
  for (const std::optional<double>& count : steps) {
    counts.push_back(absl::StrFormat("%.0f", *count));
    if (std::fabs(*count - *steps[0]) > kStepsDiffer * *steps[0]) differ = true;
  }
  if (!differ) return "";
  return absl::StrFormat("the runs took different numbers of steps (%s; --totals compares totals)",
                         absl::StrJoin(counts, " vs "));
}

void DivideTimesBySteps(RunDiff& diff) {
  for (DiffValues* values : {&diff.total_wall, &diff.thread_time, &diff.gpu_time, &diff.gpu_busy}) {
    DivideBySteps(*values, diff.steps);
  }
  for (DiffOperation& op : diff.operations) {
    DivideBySteps(op.cpu_time, diff.steps);
    DivideBySteps(op.gpu_time, diff.steps);
    for (DiffCategory& category : op.categories) DivideBySteps(category.time, diff.steps);
  }
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSame: return "same";
    case Verdict::kWorse: return "worse";
    case Verdict::kBetter: return "better";
  }
  return "same";
}

std::string_view ChangeStatusName(ChangeStatus status) {
  switch (status) {
    case ChangeStatus::kBoth: return "both";
    case ChangeStatus::kNew: return "new";
    case ChangeStatus::kGone: return "gone";
    case ChangeStatus::kAbsent: return "absent";
  }
  return "absent";
}

Change CompareValues(std::optional<double> baseline, std::optional<double> value) {
  Change change;
  if (baseline.has_value() && value.has_value()) {
    change.status = ChangeStatus::kBoth;
    change.delta = *value - *baseline;
    if (*baseline != 0) change.ratio = *value / *baseline;
  } else if (value.has_value()) {
    change.status = ChangeStatus::kNew;
  } else if (baseline.has_value()) {
    change.status = ChangeStatus::kGone;
  }
  return change;
}

std::vector<std::string> RunLabels(const std::vector<std::string>& dirs) {
  std::vector<std::string> labels;
  std::map<std::string, int> seen;
  for (const std::string& dir : dirs) {
    labels.push_back(Basename(dir));
    ++seen[labels.back()];
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (seen[labels[i]] > 1) labels[i] = absl::StrFormat("%s#%d", labels[i], i + 1);
  }
  return labels;
}

RunDiff DiffRuns(const std::vector<DiffInput>& inputs, const DiffOptions& options) {
  RunDiff diff;
  diff.step_operation = options.step_operation;
  const size_t n = inputs.size();
  std::vector<RunTotals> totals;
  std::vector<int64_t> thread_wholes, gpu_wholes;
  for (const DiffInput& input : inputs) {
    const RunReport& report = *input.report;
    totals.push_back(Tally(report));
    const RunTotals& t = totals.back();
    DiffRunSummary run;
    run.label = input.label;
    run.dir = input.dir;
    run.command = report.metadata.command;
    run.exit_code = report.metadata.exit_code;
    run.corrected = report.corrected;
    run.data_damaged = report.data_damaged;
    run.wall_ns = report.metadata.wall_ns;
    if (report.corrected) run.corrected_wall_ns = report.corrected_wall_ns;
    // A windowed run's times are its windows': so is the wall time compared.
    run.total_wall_ns = report.windowed ? report.captured_ns : run.corrected_wall_ns.value_or(run.wall_ns);
    run.thread_ns = t.thread_ns;
    run.gpu_ns = t.gpu_ns;
    if (t.gpu_captured) {
      run.gpu_busy_ns = report.gpu_busy_ns;
      if (run.total_wall_ns > 0) {
        run.gpu_busy_fraction = static_cast<double>(report.gpu_busy_ns) / static_cast<double>(run.total_wall_ns);
      }
    }
    if (report.nvidia_smi.has_value()) {
      for (const GpuUtilizationSummary& gpu : report.nvidia_smi->gpus) {
        if (run.nvidia_smi_mean.has_value() && gpu.mean_percent <= 100.0 * *run.nvidia_smi_mean) continue;
        run.nvidia_smi_gpu = gpu.gpu_index;
        run.nvidia_smi_mean = gpu.mean_percent / 100.0;
        run.nvidia_smi_max = gpu.max_percent / 100.0;
      }
    }
    thread_wholes.push_back(t.thread_ns);
    gpu_wholes.push_back(t.gpu_ns);
    diff.runs.push_back(std::move(run));
  }
  if (n == 0) return diff;

  const auto& runs = diff.runs;
  diff.total_wall = MakeValues(n, true, [&](size_t i) { return std::optional<double>(runs[i].total_wall_ns); });
  diff.thread_time = MakeValues(n, true, [&](size_t i) { return std::optional<double>(runs[i].thread_ns); });
  diff.gpu_time = MakeValues(n, true, [&](size_t i) -> std::optional<double> {
    if (!totals[i].gpu_captured && runs[i].gpu_ns == 0) return std::nullopt;
    return static_cast<double>(runs[i].gpu_ns);
  });
  diff.gpu_busy = MakeValues(n, true, [&](size_t i) -> std::optional<double> {
    if (!runs[i].gpu_busy_ns.has_value()) return std::nullopt;
    return static_cast<double>(*runs[i].gpu_busy_ns);
  });
  diff.gpu_busy_fraction = MakeValues(n, false, [&](size_t i) { return runs[i].gpu_busy_fraction; });
  diff.nvidia_smi_mean = MakeValues(n, false, [&](size_t i) { return runs[i].nvidia_smi_mean; });

  // Operations: every name any run has, ordered as documented.
  std::set<std::string> names;
  for (const RunTotals& t : totals) {
    for (const auto& [name, ns] : t.operation_cpu) names.insert(name);
    for (const auto& [name, ns] : t.operation_gpu) names.insert(name);
    for (const auto& [name, rows] : t.transitions) names.insert(name);
  }
  std::vector<std::string> ordered(names.begin(), names.end());
  auto sort_key = [&](const std::string& name) {
    const bool in_baseline =
        totals[0].operation_cpu.count(name) || totals[0].operation_gpu.count(name) || totals[0].transitions.count(name);
    double ns = 0;
    if (in_baseline) {
      ns = Lookup(totals[0].operation_cpu, name).value_or(0);
    } else {
      for (const RunTotals& t : totals) ns = std::max(ns, Lookup(t.operation_cpu, name).value_or(0));
    }
    return std::make_pair(in_baseline ? 0 : 1, -ns);
  };
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const std::string& a, const std::string& b) { return sort_key(a) < sort_key(b); });

  for (const std::string& name : ordered) {
    DiffOperation op;
    op.name = name;
    op.cpu_time = MakeValues(
        n, true, [&](size_t i) { return Lookup(totals[i].operation_cpu, name); }, &thread_wholes);
    op.gpu_time = MakeValues(
        n, true, [&](size_t i) { return Lookup(totals[i].operation_gpu, name); }, &gpu_wholes);
    std::set<Category> cpu_categories, gpu_categories;
    std::set<LevelPair> transition_keys;
    for (const RunTotals& t : totals) {
      if (auto it = t.cpu.find(name); it != t.cpu.end()) {
        for (const auto& [category, ns] : it->second) cpu_categories.insert(category);
      }
      if (auto it = t.gpu.find(name); it != t.gpu.end()) {
        for (const auto& [category, ns] : it->second) gpu_categories.insert(category);
      }
      if (auto it = t.transitions.find(name); it != t.transitions.end()) {
        for (const auto& [key, count] : it->second) transition_keys.insert(key);
      }
    }
    for (bool gpu : {false, true}) {
      for (Category category : gpu ? gpu_categories : cpu_categories) {
        DiffCategory cell;
        cell.category = category;
        cell.gpu = gpu;
        cell.time = MakeValues(
            n, true,
            [&](size_t i) -> std::optional<double> {
              const auto& side = gpu ? totals[i].gpu : totals[i].cpu;
              const auto it = side.find(name);
              if (it == side.end()) return std::nullopt;
              return Lookup(it->second, category);
            },
            gpu ? &gpu_wholes : &thread_wholes);
        op.categories.push_back(std::move(cell));
      }
    }
    op.instances = MakeValues(n, true, [&](size_t i) { return Lookup(totals[i].instances, name); });
    for (const LevelPair& key : transition_keys) {
      DiffTransition transition;
      transition.from = key.first;
      transition.to = key.second;
      transition.per_instance = MakeValues(n, false, [&](size_t i) -> std::optional<double> {
        const auto it = totals[i].transitions.find(name);
        if (it == totals[i].transitions.end()) return std::nullopt;
        const std::optional<double> count = Lookup(it->second, key);
        if (!count.has_value()) return std::nullopt;
        const double instances = Lookup(totals[i].instances, name).value_or(0);
        return instances > 0 ? *count / instances : *count;
      });
      op.transitions.push_back(std::move(transition));
    }
    diff.operations.push_back(std::move(op));
  }

  diff.steps = MakeValues(n, true, [&](size_t i) -> std::optional<double> {
    const uint64_t steps = StepsOf(*inputs[i].report, options.step_operation);
    if (steps == 0) return std::nullopt;
    return static_cast<double>(steps);
  });
  diff.wall_per_step = MakeValues(n, false, [&](size_t i) -> std::optional<double> {
    if (!diff.steps.values[i].has_value()) return std::nullopt;
    return static_cast<double>(runs[i].total_wall_ns) / *diff.steps.values[i];
  });
  diff.per_step_why = PerStepWhy(diff, options.per_step);
  diff.per_step = !diff.per_step_why.empty();
  MarkTimes(diff);
  if (diff.per_step) DivideTimesBySteps(diff);
  JudgeChanges(diff);

  std::vector<std::string> corrected, uncorrected;
  for (const DiffRunSummary& run : runs) (run.corrected ? corrected : uncorrected).push_back(run.label);
  diff.mixed_correction = !corrected.empty() && !uncorrected.empty();
  if (diff.mixed_correction) {
    diff.warnings.push_back(absl::StrFormat(
        "runs mix corrected (%s) and uncorrected (%s) reports: the uncorrected include rlscope's own overhead, so "
        "comparing them is misleading (run 'rlscope calibrate', then 'rlscope report DIR' on each run)",
        absl::StrJoin(corrected, ", "), absl::StrJoin(uncorrected, ", ")));
  }
  for (size_t i = 0; i < n; ++i) {
    if (options.per_step == PerStep::kOn && !diff.steps.values[i].has_value()) {
      diff.warnings.push_back(absl::StrFormat(
          "%s never entered '%s': it has no steps, so its times per step are absent (--step-operation names "
          "another operation)",
          runs[i].label, options.step_operation));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i].report->windowed) {
      diff.warnings.push_back(absl::StrFormat(
          "%s was captured in windows only: its times and steps are the windows', and its wall time is theirs (%s "
          "of the run's %s)",
          runs[i].label, FormatDuration(inputs[i].report->captured_ns), FormatDuration(runs[i].wall_ns)));
    }
  }
  for (const DiffRunSummary& run : runs) {
    if (run.data_damaged) {
      diff.warnings.push_back(
          absl::StrFormat("%s: some trace data was damaged; its report covers what could be read", run.label));
    }
    if (run.exit_code != 0) {
      diff.warnings.push_back(absl::StrFormat("%s: the command exited with status %d", run.label, run.exit_code));
    }
  }
  return diff;
}

}  // namespace rlscope::report
