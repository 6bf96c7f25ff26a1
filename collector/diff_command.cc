#include "collector/diff_command.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "collector/file_output.h"
#include "report/diff_html.h"
#include "report/diff_json.h"
#include "report/diff_text.h"
#include "report/job_directory.h"
#include "report/run_diff.h"
#include "report/run_report.h"
#include "report/run_sink.h"

namespace rlscope::collector {

namespace {

constexpr const char* kDiffUsage =
    R"USAGE(usage: rlscope diff [--format text|json|html] [-o FILE] [--top N] [--calibration FILE]
                    [--per-step | --totals] [--step-operation NAME] DIR_A DIR_B [DIR_C ...]

Compare two or more runs (directories made by 'rlscope run --out DIR'),
side by side: torch vs jax, eager vs compiled, PPO vs DQN. The first run is
the baseline; every later run is compared with it. Each run is analysed
again from its traces, as 'rlscope report DIR' does (nothing is written).

A merged job's directory ('rlscope merge DIR... --out JOB') compares as
one run: its nodes' rows, operations' instances and transitions summed
over every rank of every node, its wall time its longest node's (the
nodes ran at once), its steps those of the rank that stepped most. A job
can be compared with a job or with a one-node run (the same training on
one node and on two). GPU busy time is not compared for a job: it is the
union over every node's GPUs, which the nodes' reports do not hold.

Runs are labelled by their directory's basename; where basenames repeat,
"#N" (the run's position, from 1) is appended to every one of them.

What is compared:
  - totals: wall time (the corrected estimate when the run's report is
    corrected, else the profiled one), thread time (sum of the CPU-side
    rows), GPU time (sum of the GPU rows), GPU busy time (some GPU busy) and
    its fraction of the wall time;
  - per operation (matched by exact name; processes summed, as pids differ
    between runs) and per category (Python, Backend, Simulator, Native,
    CUDA API, Profiler; GPU Kernel, Memcpy, Memset): time and share. CPU
    and CPU+GPU resources are merged. A CPU-side share is of the run's
    thread time, a GPU one of its GPU time;
  - transitions between levels per operation instance, and instances;
  - steps: how many times each run entered the step operation
    (--step-operation, default simulation: one call of an environment's
    step, counted in the process that stepped most, so a vector
    environment's step of N environments counts once), and the wall time
    per step. When every run has steps and their counts differ by more
    than 1 %, every time is divided by the run's steps, so runs of
    different lengths compare directly; the output says so (--per-step
    always divides, --totals never does).
For each run after the baseline: ratio = run / baseline and delta = run -
baseline. An operation, category or transition a run does not have is
shown as an em dash (null in JSON), never as 0; its ratio is "new" when the
baseline lacks it, "gone" when the run lacks it. A time that grew by 5 % or
more is marked "worse" (a regression), one that shrank as much "better",
where it is at least 1 % of its run's total (text: after the ratio; HTML:
coloured red and green; JSON: "verdict").

Times are each report's rows: corrected ones (estimated without rlscope's
overhead) when the run has a calibration, else measured ones. Comparing a
corrected run with an uncorrected one is misleading; the output warns.

options:
  --format text|json|html  output format (default text). HTML: one
                      self-contained page (no network needed): the runs,
                      totals, a chart of each operation's time per run
                      stacked by category, the tables below. JSON: schema
                      "rlscope.diff/1":
      {"schema", "baseline": 0, "mixed_correction": bool, "warnings": [...],
       "runs": [{"label", "dir", "command", "exit_code", "corrected",
                 "data_damaged", "wall_ns", "corrected_wall_ns"|null,
                 "total_wall_ns", "thread_ns", "gpu_ns", "gpu_busy_ns"|null,
                 "gpu_busy_fraction"|null}],
       "totals": {"total_wall_ns", "thread_ns", "gpu_ns", "gpu_busy_ns",
                  "gpu_busy_fraction", "steps", "wall_ns_per_step": VALUES,
                  "step_operation": NAME},
       "per_step": bool, "per_step_why": "" | why times are per step,
       "operations": [{"operation", "cpu_ns": VALUES, "gpu_ns": VALUES,
                       "categories": [{"category", "resource": "CPU"|"GPU",
                                       VALUES...}],
                       "instances": VALUES,
                       "transitions": [{"from", "to", VALUES...}]}]}
      VALUES = {"values": [per run, null: absent],
                "shares": [per run, fraction 0..1, null: absent] (times only),
                "changes": [null for the baseline, then per run
                            {"status": "both"|"new"|"gone"|"absent",
                             "ratio": number|null, "delta": number|null,
                             "verdict": "same"|"worse"|"better"}]}
      Operations are ordered by the baseline's thread time (largest first),
      then those the baseline lacks.
  --top N             text and html: show the N largest operations
                      (default 20; 0: all)
  -o, --output FILE   write to FILE instead of stdout
  --calibration FILE  correct every run with this calibration instead of its own
  --per-step          always divide every time by the run's steps (a run
                      without steps gets no times, and a warning)
  --totals            never divide by steps: compare the runs' totals
  --step-operation NAME
                      the operation whose entries count as steps (default
                      simulation)
  -h, --help          show this help

exit status: 0 compared; 1 a directory could not be analysed (not a run
directory) or --output could not be written; 2 usage error (e.g. fewer
than two directories).
)USAGE";

int Usage(const std::string& message) {
  std::cerr << UsageError("diff", message).message() << "\n";
  return 2;
}

}  // namespace

int DiffCommandMain(const std::vector<std::string>& args) {
  ArgCursor cursor(args);
  std::string format = "text", calibration_path, output_path;
  size_t top = 20;
  report::DiffOptions diff_options;
  std::vector<std::string> dirs;
  while (cursor.NextOption(dirs)) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      std::cout << kDiffUsage;
      return 0;
    }
    if (option.name == "--per-step") {
      if (option.inline_value.has_value()) return Usage("--per-step takes no value");
      if (diff_options.per_step == report::PerStep::kOff) return Usage("--per-step and --totals exclude each other");
      diff_options.per_step = report::PerStep::kOn;
      continue;
    }
    if (option.name == "--totals") {
      if (option.inline_value.has_value()) return Usage("--totals takes no value");
      if (diff_options.per_step == report::PerStep::kOn) return Usage("--per-step and --totals exclude each other");
      diff_options.per_step = report::PerStep::kOff;
      continue;
    }
    if (option.name != "--format" && option.name != "--top" && option.name != "--calibration" && option.name != "-o" &&
        option.name != "--output" && option.name != "--step-operation") {
      return Usage(absl::StrFormat("unknown option '%s'", option.name));
    }
    absl::StatusOr<std::string> value = cursor.TakeValue(option);
    if (!value.ok()) return Usage(std::string(value.status().message()));
    if (option.name == "--format") {
      if (*value != "text" && *value != "json" && *value != "html") {
        return Usage(absl::StrFormat("--format must be text, json or html, not '%s'", *value));
      }
      format = *value;
    } else if (option.name == "--top") {
      const std::optional<int64_t> n = ParseWholeNumber(*value, 0, INT64_MAX);
      if (!n) return Usage(WholeNumberProblem("--top", *value, 0));
      top = static_cast<size_t>(*n);
    } else if (option.name == "-o" || option.name == "--output") {
      output_path = *value;
    } else if (option.name == "--step-operation") {
      if (value->empty()) return Usage("--step-operation needs an operation's name");
      diff_options.step_operation = *value;
    } else {
      calibration_path = *value;
    }
  }
  if (dirs.size() < 2) {
    return Usage(dirs.empty() ? "no run directories given: give two or more"
                              : "give two or more run directories (the first is the baseline)");
  }
  std::vector<report::RunReport> reports;
  reports.reserve(dirs.size());
  for (const std::string& dir : dirs) {
    if (report::IsJobDirectory(dir)) {
      if (!calibration_path.empty()) {
        return Usage(
            absl::StrFormat("%s is a merged job, whose nodes' reports were corrected where they were "
                            "analysed: --calibration applies to runs only",
                            dir));
      }
      absl::StatusOr<report::MergedJob> job = report::LoadJobDirectory(dir);
      if (!job.ok()) {
        std::cerr << "rlscope diff: " << job.status().message() << "\n";
        return 1;
      }
      reports.push_back(std::move(job->merged));
      continue;
    }
    absl::StatusOr<report::RunReport> run = report::LoadRunReport(dir, calibration_path);
    if (!run.ok()) {
      std::cerr << "rlscope diff: " << run.status().message() << "\n";
      return 1;
    }
    reports.push_back(*std::move(run));
  }
  const std::vector<std::string> labels = report::RunLabels(dirs);
  std::vector<report::DiffInput> inputs;
  for (size_t i = 0; i < dirs.size(); ++i) inputs.push_back({labels[i], dirs[i], &reports[i]});
  const report::RunDiff diff = report::DiffRuns(inputs, diff_options);
  const std::string output = format == "json"   ? report::FormatDiffJson(diff)
                             : format == "html" ? report::FormatDiffHtml(diff, top)
                                                : report::FormatDiffText(diff, top);
  if (output_path.empty() || output_path == "-") {
    std::cout << output;
    return 0;
  }
  if (absl::Status written = WriteFile(output_path, output); !written.ok()) {
    std::cerr << "rlscope diff: " << written.message() << " (does its directory exist and is it writable?)\n";
    return 1;
  }
  return 0;
}

}  // namespace rlscope::collector
