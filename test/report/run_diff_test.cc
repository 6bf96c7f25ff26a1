#include "report/run_diff.h"

#include <catch2/catch.hpp>

#include "nlohmann/json.hpp"
#include "report/diff_json.h"
#include "report/diff_text.h"
#include "test/report/diff_test_runs.h"

using namespace rlscope::report;
using diff_test::Row;
using diff_test::Run;

namespace {

const DiffOperation& Op(const RunDiff& diff, const std::string& name) {
  for (const DiffOperation& op : diff.operations) {
    if (op.name == name) return op;
  }
  FAIL("no operation " << name);
  return diff.operations.front();
}

const DiffCategory* Cat(const DiffOperation& op, Category category, bool gpu = false) {
  for (const DiffCategory& cell : op.categories) {
    if (cell.category == category && cell.gpu == gpu) return &cell;
  }
  return nullptr;
}

RunDiff Diff(const std::vector<const RunReport*>& reports) {
  std::vector<DiffInput> inputs;
  for (size_t i = 0; i < reports.size(); ++i) inputs.push_back({"r" + std::to_string(i), "/x", reports[i]});
  return DiffRuns(inputs);
}

}  // namespace

TEST_CASE("CompareValues: both, new, gone, absent", "[diff]") {
  Change both = CompareValues(200, 300);
  CHECK(both.status == ChangeStatus::kBoth);
  CHECK(*both.ratio == Approx(1.5));
  CHECK(*both.delta == Approx(100));
  Change zero = CompareValues(0, 5);
  CHECK(zero.status == ChangeStatus::kBoth);
  CHECK_FALSE(zero.ratio.has_value());
  CHECK(*zero.delta == Approx(5));
  CHECK(CompareValues(std::nullopt, 5).status == ChangeStatus::kNew);
  CHECK_FALSE(CompareValues(std::nullopt, 5).delta.has_value());
  CHECK(CompareValues(5, std::nullopt).status == ChangeStatus::kGone);
  CHECK_FALSE(CompareValues(5, std::nullopt).ratio.has_value());
  CHECK(CompareValues(std::nullopt, std::nullopt).status == ChangeStatus::kAbsent);
}

TEST_CASE("operations matched by name across processes, ratio and delta per category", "[diff]") {
  RunReport a = Run({Row("train", Category::kPython, 100), Row("train", Category::kCudaApi, 300),
                     Row("train", Category::kCudaApi, 100, Resource::kCpuGpu), Row("(none)", Category::kPython, 500)});
  RunReport b = Run({Row("train", Category::kPython, 50, Resource::kCpu, 7),
                     Row("train", Category::kPython, 150, Resource::kCpu, 8), Row("train", Category::kCudaApi, 200),
                     Row("(none)", Category::kPython, 600)});
  const RunDiff diff = Diff({&a, &b});
  REQUIRE(diff.operations.size() == 2);
  CHECK(diff.operations[0].name == "(none)");  // Baseline's largest first.
  const DiffOperation& train = Op(diff, "train");
  CHECK(*train.cpu_time.values[0] == 500);
  CHECK(*train.cpu_time.values[1] == 400);
  CHECK(*train.cpu_time.shares[0] == Approx(0.5));  // Of 1000 ns thread time.
  CHECK(*train.cpu_time.shares[1] == Approx(0.4));
  CHECK(*train.cpu_time.changes[1].ratio == Approx(0.8));
  CHECK(*train.cpu_time.changes[1].delta == Approx(-100));
  const DiffCategory* python = Cat(train, Category::kPython);
  REQUIRE(python != nullptr);
  CHECK(*python->time.values[1] == 200);  // Two processes summed.
  CHECK(*python->time.changes[1].ratio == Approx(2.0));
  const DiffCategory* cuda = Cat(train, Category::kCudaApi);
  REQUIRE(cuda != nullptr);
  CHECK(*cuda->time.values[0] == 400);  // CPU and CPU+GPU merged.
  CHECK(*cuda->time.changes[1].delta == Approx(-200));
  CHECK(*diff.thread_time.values[0] == 1000);
  CHECK(*diff.total_wall.values[0] == 1000);
  CHECK_FALSE(diff.gpu_busy.values[0].has_value());  // No GPU capture: absent, not 0.
  CHECK_FALSE(diff.mixed_correction);
}

TEST_CASE("an operation or category one side lacks is absent, new or gone, never 0", "[diff]") {
  RunReport a = Run({Row("inference", Category::kBackend, 100), Row("old", Category::kPython, 10)});
  RunReport b = Run({Row("inference", Category::kPython, 100), Row("fresh", Category::kSimulator, 30)});
  const RunDiff diff = Diff({&a, &b});
  const DiffOperation& fresh = Op(diff, "fresh");
  CHECK_FALSE(fresh.cpu_time.values[0].has_value());
  CHECK_FALSE(fresh.cpu_time.shares[0].has_value());
  CHECK(fresh.cpu_time.changes[1].status == ChangeStatus::kNew);
  CHECK_FALSE(fresh.cpu_time.changes[1].ratio.has_value());
  CHECK_FALSE(fresh.cpu_time.changes[1].delta.has_value());
  CHECK(Op(diff, "old").cpu_time.changes[1].status == ChangeStatus::kGone);
  CHECK(diff.operations.back().name == "fresh");  // Not in the baseline: last.
  const DiffOperation& inference = Op(diff, "inference");
  CHECK(Cat(inference, Category::kBackend)->time.changes[1].status == ChangeStatus::kGone);
  CHECK(Cat(inference, Category::kPython)->time.changes[1].status == ChangeStatus::kNew);
  CHECK(inference.cpu_time.changes[1].status == ChangeStatus::kBoth);
  CHECK(*inference.cpu_time.changes[1].ratio == Approx(1.0));
  CHECK_FALSE(inference.gpu_time.values[0].has_value());  // No GPU rows.

  const std::string text = FormatDiffText(diff);
  CHECK(text.find("new") != std::string::npos);
  CHECK(text.find("gone") != std::string::npos);
  CHECK(text.find("\u2014") != std::string::npos);
  const nlohmann::json json = nlohmann::json::parse(FormatDiffJson(diff));
  CHECK(json["schema"] == "rlscope.diff/1");
  for (const auto& op : json["operations"]) {
    if (op["operation"] != "fresh") continue;
    CHECK(op["cpu_ns"]["values"][0].is_null());
    CHECK(op["cpu_ns"]["values"][1] == 30);
    CHECK(op["cpu_ns"]["changes"][0].is_null());
    CHECK(op["cpu_ns"]["changes"][1]["status"] == "new");
    CHECK(op["cpu_ns"]["changes"][1]["ratio"].is_null());
  }
}

TEST_CASE("three runs: each compared with the first, GPU rows and busy time", "[diff]") {
  RunReport a = Run({Row("step", Category::kCudaApi, 100), Row("step", Category::kGpuKernel, 40, Resource::kGpu)}, 200);
  RunReport b = Run({Row("step", Category::kCudaApi, 300), Row("step", Category::kGpuKernel, 80, Resource::kGpu)}, 400);
  RunReport c = Run({Row("step", Category::kCudaApi, 50)}, 100);
  for (RunReport* report : {&a, &b}) {
    report->processes[0].gpu.status = "captured";
    report->gpu_busy_ns = 50;
  }
  a.corrected = true;
  a.corrected_wall_ns = 100;
  const RunDiff diff = Diff({&a, &b, &c});
  REQUIRE(diff.runs.size() == 3);
  const DiffOperation& step = Op(diff, "step");
  CHECK(*step.cpu_time.changes[1].ratio == Approx(3.0));
  CHECK(*step.cpu_time.changes[2].ratio == Approx(0.5));
  CHECK(*step.cpu_time.changes[2].delta == Approx(-50));
  const DiffCategory* kernel = Cat(step, Category::kGpuKernel, true);
  REQUIRE(kernel != nullptr);
  CHECK(*kernel->time.shares[0] == Approx(1.0));  // Of the run's GPU time.
  CHECK(*kernel->time.changes[1].ratio == Approx(2.0));
  CHECK(kernel->time.changes[2].status == ChangeStatus::kGone);
  // Corrected wall for the corrected run, profiled for the others.
  CHECK(diff.runs[0].total_wall_ns == 100);
  CHECK(*diff.total_wall.changes[1].ratio == Approx(4.0));
  CHECK(*diff.gpu_busy_fraction.values[0] == Approx(0.5));
  CHECK(*diff.gpu_busy_fraction.values[1] == Approx(0.125));
  CHECK(diff.gpu_busy.changes[2].status == ChangeStatus::kGone);
  CHECK(diff.mixed_correction);
  REQUIRE_FALSE(diff.warnings.empty());
  CHECK(diff.warnings[0].find("mix corrected") != std::string::npos);
}

TEST_CASE("nvidia-smi per run: the busiest GPU's mean and max, absent where not sampled", "[diff]") {
  RunReport a = Run({Row("step", Category::kCudaApi, 100)});
  RunReport b = Run({Row("step", Category::kCudaApi, 100)});
  GpuUtilization smi;
  smi.gpus.push_back({0, 10, 2.5, 9, 0});
  smi.gpus.push_back({3, 10, 40.0, 84, 0});
  smi.gpus.push_back({5, 10, 7.0, 100, 0});
  a.nvidia_smi = smi;
  const RunDiff diff = Diff({&a, &b});
  REQUIRE(diff.runs[0].nvidia_smi_gpu.has_value());
  CHECK(*diff.runs[0].nvidia_smi_gpu == 3);
  CHECK(*diff.runs[0].nvidia_smi_mean == Approx(0.40));
  CHECK(*diff.runs[0].nvidia_smi_max == Approx(0.84));
  CHECK_FALSE(diff.runs[1].nvidia_smi_mean.has_value());
  CHECK(*diff.nvidia_smi_mean.values[0] == Approx(0.40));
  CHECK(diff.nvidia_smi_mean.changes[1].status == ChangeStatus::kGone);
  const nlohmann::json json = nlohmann::json::parse(FormatDiffJson(diff));
  CHECK(json["runs"][0]["nvidia_smi_gpu"] == 3);
  CHECK(json["runs"][0]["nvidia_smi_max_fraction"].get<double>() == Approx(0.84));
  CHECK(json["runs"][1]["nvidia_smi_mean_fraction"].is_null());
  CHECK(json["totals"]["nvidia_smi_mean_fraction"]["values"][0].get<double>() == Approx(0.40));
  CHECK(FormatDiffText(diff).find("(mean, busiest GPU)") != std::string::npos);
}

TEST_CASE("transitions per operation instance, summed over processes", "[diff]") {
  RunReport a = Run({Row("step", Category::kPython, 10)});
  RunReport b = Run({Row("step", Category::kPython, 10)});
  a.processes[0].transitions = {{"step", Category::kPython, Category::kBackend, 20, 10},
                                {"step", Category::kBackend, Category::kCudaApi, 30, 10}};
  ProcessReport second;
  second.pid = 2;
  second.transitions = {{"step", Category::kPython, Category::kBackend, 40, 10}};
  b.processes[0].transitions = {{"step", Category::kPython, Category::kBackend, 20, 10}};
  // As the analysis makes them: each process's instances beside its rows.
  for (ProcessReport* process : {&a.processes[0], &b.processes[0], &second})
    process->operation_instances = {{"step", 10}};
  b.processes.push_back(second);
  const RunDiff diff = Diff({&a, &b});
  const DiffOperation& step = Op(diff, "step");
  CHECK(*step.instances.values[0] == 10);
  CHECK(*step.instances.values[1] == 20);
  REQUIRE(step.transitions.size() == 2);
  CHECK(step.transitions[0].from == Category::kPython);
  CHECK(*step.transitions[0].per_instance.values[0] == Approx(2.0));
  CHECK(*step.transitions[0].per_instance.values[1] == Approx(3.0));
  CHECK(*step.transitions[0].per_instance.changes[1].ratio == Approx(1.5));
  CHECK(step.transitions[1].per_instance.changes[1].status == ChangeStatus::kGone);
}

TEST_CASE("run labels: basenames, disambiguated by position", "[diff]") {
  CHECK(RunLabels({"/a/torch/", "jax"}) == std::vector<std::string>{"torch", "jax"});
  CHECK(RunLabels({"/x/run", "/y/run", "z"}) == std::vector<std::string>{"run#1", "run#2", "z"});
}

TEST_CASE("steps: entries into simulation, counted without transitions, and wall time per step", "[diff]") {
  RunReport torch = Run({Row("simulation", Category::kPython, 400), Row("inference", Category::kBackend, 600)}, 2000);
  torch.processes[0].operation_instances = {{"simulation", 100}, {"inference", 100}};
  RunReport jax = Run({Row("simulation", Category::kPython, 500), Row("inference", Category::kBackend, 100)}, 1500);
  jax.processes[0].operation_instances = {{"simulation", 250}};
  RunReport none = Run({Row("train", Category::kPython, 900)}, 900);

  const RunDiff diff = Diff({&torch, &jax, &none});
  CHECK(diff.step_operation == "simulation");
  CHECK_FALSE(diff.per_step);
  CHECK(*diff.steps.values[0] == 100);
  CHECK(*diff.steps.values[1] == 250);
  CHECK_FALSE(diff.steps.values[2].has_value());
  CHECK(*diff.wall_per_step.values[0] == Approx(20));
  CHECK(*diff.wall_per_step.values[1] == Approx(6));
  CHECK(*Op(diff, "simulation").cpu_time.values[1] == 500);  // Totals stay totals without --per-step.
  CHECK(*Op(diff, "inference").instances.values[0] == 100);

  nlohmann::json json = nlohmann::json::parse(FormatDiffJson(diff));
  CHECK(json["per_step"] == false);
  CHECK(json["totals"]["step_operation"] == "simulation");
  CHECK(json["totals"]["steps"]["values"][1] == 250);
  CHECK(json["totals"]["steps"]["values"][2].is_null());
  CHECK(FormatDiffText(diff, 0).find("wall time per step") != std::string::npos);
}

TEST_CASE("per step: every time divided by the run's steps; a run without steps has none", "[diff]") {
  RunReport torch = Run({Row("simulation", Category::kPython, 400), Row("inference", Category::kBackend, 600)}, 2000);
  torch.processes[0].operation_instances = {{"simulation", 100}};
  RunReport jax = Run({Row("simulation", Category::kPython, 500), Row("inference", Category::kBackend, 100)}, 1500);
  jax.processes[0].operation_instances = {{"simulation", 250}};
  RunReport none = Run({Row("simulation", Category::kPython, 900)}, 900);

  std::vector<DiffInput> inputs = {{"torch", "/t", &torch}, {"jax", "/j", &jax}, {"none", "/n", &none}};
  DiffOptions options;
  options.per_step = PerStep::kOn;
  const RunDiff diff = DiffRuns(inputs, options);
  CHECK(diff.per_step);
  CHECK(*diff.total_wall.values[0] == Approx(20));
  CHECK(*diff.total_wall.values[1] == Approx(6));
  CHECK(*diff.thread_time.values[0] == Approx(10));
  const DiffOperation& simulation = Op(diff, "simulation");
  CHECK(*simulation.cpu_time.values[0] == Approx(4));
  CHECK(*simulation.cpu_time.values[1] == Approx(2));
  CHECK(*simulation.cpu_time.changes[1].ratio == Approx(0.5));
  CHECK(*simulation.cpu_time.shares[1] == Approx(500.0 / 600.0));  // Shares are of the whole, unchanged.
  CHECK_FALSE(simulation.cpu_time.values[2].has_value());
  CHECK(*Cat(Op(diff, "inference"), Category::kBackend)->time.values[1] == Approx(0.4));
  bool warned = false;
  for (const std::string& warning : diff.warnings) warned |= warning.find("none never entered 'simulation'") == 0;
  CHECK(warned);
  CHECK(FormatDiffText(diff, 0).find("times are per step") != std::string::npos);

  options.step_operation = "inference";
  const RunDiff by_inference = DiffRuns(inputs, options);
  CHECK(by_inference.step_operation == "inference");
  CHECK_FALSE(by_inference.steps.values[0].has_value());  // Entered, but counted nowhere.
}

TEST_CASE("steps: the process that stepped most, not the sum over a vector env's workers", "[diff]") {
  RunReport vector_env = Run({Row("simulation", Category::kPython, 400)});
  vector_env.processes[0].operation_instances = {{"simulation", 300}};  // The parent's vector steps.
  for (int worker = 2; worker <= 3; ++worker) {
    ProcessReport process;
    process.pid = worker;
    process.operation_instances = {{"simulation", 300}};  // Each worker's steps of its copy.
    vector_env.processes.push_back(process);
  }
  CHECK(StepsOf(vector_env, "simulation") == 300);
  CHECK(StepsOf(vector_env, "inference") == 0);
}

TEST_CASE("per step by default when every run has steps and their counts differ", "[diff]") {
  RunReport short_run = Run({Row("simulation", Category::kPython, 400)}, 2000);
  short_run.processes[0].operation_instances = {{"simulation", 100}};
  RunReport long_run = Run({Row("simulation", Category::kPython, 1000)}, 5000);
  long_run.processes[0].operation_instances = {{"simulation", 250}};
  RunReport same_length = Run({Row("simulation", Category::kPython, 500)}, 2500);
  same_length.processes[0].operation_instances = {{"simulation", 100}};

  const RunDiff differing = Diff({&short_run, &long_run});
  CHECK(differing.per_step);
  CHECK(differing.per_step_why.find("different numbers of steps (100 vs 250") != std::string::npos);
  CHECK(*Op(differing, "simulation").cpu_time.values[1] == Approx(4));
  CHECK(FormatDiffText(differing, 0).find("times are per step") != std::string::npos);

  const RunDiff equal = Diff({&short_run, &same_length});
  CHECK_FALSE(equal.per_step);
  CHECK(equal.per_step_why.empty());

  std::vector<DiffInput> inputs = {{"short", "/s", &short_run}, {"long", "/l", &long_run}};
  DiffOptions totals;
  totals.per_step = PerStep::kOff;
  const RunDiff compared_totals = DiffRuns(inputs, totals);
  CHECK_FALSE(compared_totals.per_step);
  CHECK(*Op(compared_totals, "simulation").cpu_time.values[1] == 1000);
}

TEST_CASE("a time that grew 5 % or more is worse, one that shrank as much better, if visible", "[diff]") {
  RunReport base = Run({Row("inference", Category::kPython, 1000), Row("simulation", Category::kPython, 1000),
                        Row("replay", Category::kPython, 1000), Row("logging", Category::kPython, 5)},
                       4000);
  RunReport later = Run({Row("inference", Category::kPython, 1200), Row("simulation", Category::kPython, 900),
                         Row("replay", Category::kPython, 1020), Row("logging", Category::kPython, 10)},
                        4000);
  const RunDiff diff = Diff({&base, &later});
  CHECK(Op(diff, "inference").cpu_time.changes[1].verdict == Verdict::kWorse);
  CHECK(Op(diff, "simulation").cpu_time.changes[1].verdict == Verdict::kBetter);
  CHECK(Op(diff, "replay").cpu_time.changes[1].verdict == Verdict::kSame);      // +2 %: noise.
  CHECK(Op(diff, "logging").cpu_time.changes[1].verdict == Verdict::kSame);     // 2x, but 0.3 % of the run.
  CHECK(Op(diff, "inference").instances.changes[1].verdict == Verdict::kSame);  // Not a time.
  CHECK(diff.total_wall.changes[1].verdict == Verdict::kSame);

  const std::string text = FormatDiffText(diff, 0);
  CHECK(text.find("1.20x worse") != std::string::npos);
  CHECK(text.find("0.90x better") != std::string::npos);
  CHECK(text.find("1.02x worse") == std::string::npos);
  nlohmann::json json = nlohmann::json::parse(FormatDiffJson(diff));
  bool found = false;
  for (const auto& op : json["operations"]) {
    if (op["operation"] == "inference") found = op["cpu_ns"]["changes"][1]["verdict"] == "worse";
  }
  CHECK(found);
}

TEST_CASE("per step, start-up and the totals are not judged: they shrink as runs get longer", "[diff]") {
  RunReport short_run = Run({Row("startup", Category::kPython, 1000), Row("simulation", Category::kPython, 400)}, 2000);
  short_run.processes[0].operation_instances = {{"simulation", 100}};
  RunReport long_run = Run({Row("startup", Category::kPython, 1000), Row("simulation", Category::kPython, 1000)}, 3000);
  long_run.processes[0].operation_instances = {{"simulation", 200}};
  const RunDiff diff = Diff({&short_run, &long_run});
  REQUIRE(diff.per_step);
  CHECK(Op(diff, "startup").cpu_time.changes[1].verdict == Verdict::kSame);  // 10 -> 5 per step.
  CHECK(diff.total_wall.changes[1].verdict == Verdict::kSame);
  CHECK(Op(diff, "simulation").cpu_time.changes[1].verdict == Verdict::kWorse);  // 4 -> 5 per step.
}
