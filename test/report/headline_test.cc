// The answer a report leads with (headline.h), from the report's numbers.
#include "report/headline.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace rlscope::report;

namespace {

constexpr int64_t kMs = 1'000'000;

BreakdownRow Row(const std::string& operation, Category category, int64_t ms, Resource resource = Resource::kCpu) {
  BreakdownRow row;
  row.pid = 1;
  row.operation = operation;
  row.category = category;
  row.resource = resource;
  row.ns = ms * kMs;
  return row;
}

bool Has(const std::vector<std::string>& texts, const std::string& needle) {
  for (const std::string& text : texts) {
    if (text.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("headline: the dominant operation of the loop and its level, start-up aside", "[headline]") {
  RunReport report;
  report.metadata.wall_ns = 1000 * kMs;
  report.rows = {Row("startup", Category::kPython, 100),       Row("simulation", Category::kPython, 480),
                 Row("simulation", Category::kSimulator, 120), Row("inference", Category::kBackend, 250),
                 Row("backprop", Category::kBackend, 150),     Row("simulation", Category::kWait, 5000)};
  const Headline headline = MakeHeadline(report);
  REQUIRE(!headline.findings.empty());
  // The loop: 1000 ms of work (Wait is not work); simulation 600 of it.
  CHECK(headline.findings[0].rfind("Simulation is 60% of the training loop (600.00 ms of 1.000 s;", 0) == 0);
  CHECK(headline.findings[0].find("80% of it in Python (the interpreter)") != std::string::npos);
  CHECK(Has(headline.findings, "By level, the loop is Python 48%, Backend 40%, Simulator 12%."));
  CHECK(Has(headline.findings, "No GPU work was recorded."));
  REQUIRE(headline.next_steps.size() == 1);  // Start-up is 9%: no advice about it.
  CHECK(headline.next_steps[0].rfind("Simulation is 60% of the loop, 80% of it Python: step many environments", 0) ==
        0);
}

TEST_CASE("headline: time in no operation is said to be that, with where the report explains it", "[headline]") {
  RunReport report;
  report.rows = {Row("(none)", Category::kCudaApi, 880), Row("backprop", Category::kBackend, 120)};
  const Headline headline = MakeHeadline(report);
  CHECK(headline.findings[0].rfind("88% of the training loop is in no operation, (none) (880.00 ms of 1.000 s;", 0) ==
        0);
  CHECK(headline.findings[0].find("the rule lines that would name them") != std::string::npos);
  CHECK(Has(headline.findings, "By level, the loop is CUDA API 88%, Backend 12%."));
}

TEST_CASE("headline: a run that is mostly start-up says to profile more steps", "[headline]") {
  RunReport report;
  report.rows = {Row("startup", Category::kPython, 900), Row("backprop", Category::kBackend, 100)};
  const Headline headline = MakeHeadline(report);
  REQUIRE(headline.next_steps.size() == 1);
  CHECK(headline.next_steps[0].rfind("Start-up is 90% of this run's thread time: profile more steps", 0) == 0);

  RunReport only_startup;
  only_startup.rows = {Row("startup", Category::kPython, 900), Row("teardown", Category::kPython, 10)};
  CHECK(MakeHeadline(only_startup).findings[0] ==
        "All 910.00 ms of thread time is start-up and teardown: no training loop ran long enough to show.");
  CHECK(MakeHeadline(RunReport{}).findings[0] == "No thread time was recorded: nothing to break down.");
}

TEST_CASE("headline: at most two next steps, the largest share first", "[headline]") {
  RunReport report;
  // Inference 50% of the loop, Python and CUDA API 80% of it; CUDA API 30%
  // of the loop; Python 65% of the loop.
  report.rows = {Row("inference", Category::kPython, 250),  Row("inference", Category::kCudaApi, 150),
                 Row("inference", Category::kBackend, 100), Row("backprop", Category::kPython, 400),
                 Row("backprop", Category::kCudaApi, 150),  Row("startup", Category::kPython, 10)};
  const Headline headline = MakeHeadline(report);
  REQUIRE(headline.next_steps.size() == 2);
  CHECK(headline.next_steps[0].rfind("Python itself is 62% of the loop", 0) == 0);
  CHECK(headline.next_steps[1].rfind("Inference is 48% of the loop, 80% of it Python and CUDA API calls", 0) == 0);
}

TEST_CASE("headline: GPU busy, the user's most expensive line, the correction in one line", "[headline]") {
  RunReport report;
  report.metadata.wall_ns = 2000 * kMs;
  report.gpu_busy_ns = 500 * kMs;
  report.rows = {Row("backprop", Category::kBackend, 300), Row("backprop", Category::kGpuKernel, 500, Resource::kGpu)};
  ProcessReport process;
  LineRow library;  // Not the user's: never the headline's line.
  library.operation = "backprop";
  library.location = "Linear.forward (/usr/lib/python3/dist-packages/torch/nn/modules/linear.py:113)";
  library.line = 114;
  library.outer_ns = 90 * kMs;
  LineRow setup = library;  // The user's, but in start-up.
  setup.location = "<module> (/home/u/train.py:1)";
  setup.line = 3;
  setup.user_code = true;
  setup.operation = "startup";
  setup.outer_ns = 200 * kMs;
  LineRow loss = setup;
  loss.operation = "backprop";
  loss.line = 40;
  loss.outer_ns = 30 * kMs;
  process.python_lines = {library, setup, loss};
  report.processes = {process};
  report.corrected = true;
  report.corrected_wall_ns = 1800 * kMs;
  report.corrected_wall_spread_ns = 4 * kMs;
  report.calibration_quality.verdict = "trusted";
  const Headline headline = MakeHeadline(report);
  CHECK(Has(headline.findings, "The GPU was busy 500.00 ms of the run's 2.000 s wall time (25%)."));
  report.gpu_busy_ns = 6 * kMs;
  CHECK(Has(MakeHeadline(report).findings, "The GPU was busy 6.00 ms of the run's 2.000 s wall time (0.3%)."));
  CHECK(Has(headline.findings, "train.py:40"));
  CHECK(Has(headline.findings, "(30.00 ms of native time, in backprop)."));
  CHECK(headline.correction ==
        "Corrected for rlscope's overhead: about 1.800 s without rlscope (+- 4.00 ms; profiled 2.000 s, 1.11x); "
        "calibration trusted (details at the end).");

  RunReport uncorrected;
  uncorrected.correction_message = "uncorrected: no calibration was found for the machine of this run";
  CHECK(MakeHeadline(uncorrected).correction ==
        "Not corrected for rlscope's overhead: no calibration was found for the machine of this run");
}

TEST_CASE("headline: time per environment step, of the loop and of the step itself", "[headline]") {
  RunReport report;
  report.rows = {Row("startup", Category::kPython, 500), Row("simulation", Category::kPython, 200),
                 Row("inference", Category::kBackend, 300)};
  report.steps = 1000;
  const Headline headline = MakeHeadline(report);
  // The loop: 500 ms over 1000 steps; start-up is not per step.
  CHECK(Has(headline.findings,
            "One environment step takes 500.0 us of the loop's thread time (1,000 steps; the step itself 200.0 us "
            "of it)."));
  report.steps = 0;
  CHECK_FALSE(Has(MakeHeadline(report).findings, "environment step takes"));
}

TEST_CASE("headline: an operation launching many small kernels on an idle GPU is told to batch or capture",
          "[headline]") {
  RunReport report;
  report.metadata.wall_ns = 1000 * kMs;
  report.gpu_busy_ns = 30 * kMs;
  report.rows = {Row("inference", Category::kCudaApi, 300), Row("inference", Category::kPython, 200),
                 Row("simulation", Category::kPython, 400), Row("backprop", Category::kBackend, 100)};
  ProcessReport process;
  process.pid = 1;
  process.operation_instances = {{"inference", 100}, {"backprop", 10}};
  OperationGpuRow inference;
  inference.operation = "inference";
  inference.wall_ns = 500 * kMs;
  inference.gpu_busy_ns = 15 * kMs;  // The GPU busy 3 % of acting.
  inference.kernels = 1400;          // 14 per instance.
  inference.kernel_ns = 30 * kMs;
  OperationGpuRow backprop;  // Few kernels per instance: no advice.
  backprop.operation = "backprop";
  backprop.wall_ns = 100 * kMs;
  backprop.gpu_busy_ns = 10 * kMs;
  backprop.kernels = 20;
  process.gpu.operations = {inference, backprop};
  report.processes.push_back(process);
  const Headline headline = MakeHeadline(report);
  CHECK(Has(headline.next_steps,
            "Inference launches 14 kernels per instance for 300.0 us of GPU time, and the GPU is "
            "busy 3% of its time: batch it"));
  CHECK_FALSE(Has(headline.next_steps, "Backprop launches"));
  // A busy GPU is not launch-bound: no such advice.
  report.processes[0].gpu.operations[0].gpu_busy_ns = 400 * kMs;
  CHECK_FALSE(Has(MakeHeadline(report).next_steps, "Inference launches"));
}

TEST_CASE("headline: a launcher process's time is outside the loop, and said to be", "[headline]") {
  RunReport report;
  report.metadata.wall_ns = 1000 * kMs;
  // torchrun's agent imported torch (400 ms) and watched its worker; the
  // worker trained.
  report.rows = {Row("launcher", Category::kPython, 400), Row("startup", Category::kPython, 100),
                 Row("backprop", Category::kBackend, 300), Row("simulation", Category::kPython, 100)};
  const Headline headline = MakeHeadline(report);
  REQUIRE(!headline.findings.empty());
  CHECK(headline.findings[0].rfind(
            "Backprop is 75% of the training loop (300.00 ms of 400.00 ms; start-up, teardown and launcher processes "
            "aside)",
            0) == 0);
  CHECK(LoopThreadNs(report) == 400 * kMs);
}
