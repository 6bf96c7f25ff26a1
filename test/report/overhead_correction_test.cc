#include "report/overhead_correction.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "format/wire_format.h"
#include "report/category.h"
#include "report/gpu_analysis.h"
#include "report/thread_analysis.h"
#include "test/report/timeline_fixtures.h"

using namespace rlscope::report;
using rlscope::report::fixtures::Thread;
namespace cal = rlscope::calibration;

namespace {

cal::OverheadModel Model(std::initializer_list<std::pair<const char*, double>> costs) {
  cal::OverheadModel model;
  for (const auto& [site, ns] : costs) model.costs[site] = {ns, ns / 10, 5, 1000};
  return model;
}

}  // namespace

TEST_CASE("a removal shifts later times and shrinks the interval it covers", "[correction]") {
  const TimeCorrection correction({{10, 20, 10}});
  CHECK(correction.Map(5) == 5);
  CHECK(correction.Map(15) == 10);
  CHECK(correction.Map(20) == 10);
  CHECK(correction.Map(30) == 20);
  CHECK(correction.removed_ns() == Approx(10));
  CHECK(correction.unplaced_ns() == 0);
}

TEST_CASE("a partial removal is spread evenly over its stretch", "[correction]") {
  const TimeCorrection correction({{0, 100, 25}});
  CHECK(correction.Map(40) == 30);
  CHECK(correction.Map(100) == 75);
  CHECK(correction.Map(200) == 175);
}

TEST_CASE("removals add up; more than all the time there is counted as unplaced", "[correction]") {
  // [5, 10] is asked to lose twice its length.
  const TimeCorrection correction({{0, 10, 10}, {5, 15, 10}});
  CHECK(correction.Map(5) == 0);
  CHECK(correction.Map(10) == 0);
  CHECK(correction.Map(15) == 0);
  CHECK(correction.Map(25) == 10);
  CHECK(correction.removed_ns() == Approx(15));
  CHECK(correction.unplaced_ns() == Approx(5));
  // Time never runs backwards.
  for (int64_t t = 0; t < 30; ++t) CHECK(correction.Map(t + 1) >= correction.Map(t));
}

TEST_CASE("a removal with no room is unplaced, not lost silently", "[correction]") {
  const TimeCorrection correction({{7, 7, 3}});
  CHECK(correction.Map(100) == 100);
  CHECK(correction.unplaced_ns() == Approx(3));
}

TEST_CASE("CUDA hook costs are removed around each call; the operation shrinks by exactly them", "[correction]") {
  ProcessTimeline process;
  process.begin_ns = 0;
  process.end_ns = 10'000;
  ThreadTimeline thread = Thread(0, 10'000);
  // Operation [1000, 9000] holding 4 CUDA calls of 500 ns each.
  thread.operations.push_back({1000, 9000, 7});
  for (int i = 0; i < 4; ++i) {
    const int64_t begin = 2000 + i * 1000;
    thread.cpu_events.push_back({begin, begin + 500, static_cast<int32_t>(Category::kCudaApi)});
    thread.overhead_sites.push_back({begin, begin + 500, OverheadSiteKind::kCudaHook});
  }
  process.threads.push_back(thread);
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, Model({{"cuda_hook", 100}}), "", names);
  CHECK(result.estimated_ns == Approx(400));
  CHECK(result.removed_ns == Approx(400));
  CHECK(result.by_site.at("cuda_hook").events == 4);
  const ThreadTimeline& corrected = process.threads[0];
  CHECK(corrected.operations[0].begin_ns == 1000);
  CHECK(corrected.operations[0].end_ns == 8600);
  // Calls keep their own length (the cost sits just outside them).
  for (const Interval& call : corrected.cpu_events) CHECK(call.end_ns - call.begin_ns == 500);
  CHECK(corrected.cpu_events[0].begin_ns == 2000);
  CHECK(corrected.cpu_events[1].begin_ns == 2900);
  CHECK(process.end_ns == 9600);
  CHECK(result.main_thread_removed_ns == 400);
}

TEST_CASE("CUPTI inflation is removed inside the call, by function, with family fallback", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 10'000;
  ThreadTimeline thread = Thread(0, 10'000);
  NameTable names;
  const int32_t launch = names.Intern("cudaLaunchKernel_ptsz");
  const int32_t odd = names.Intern("cudaFancyNewThing");
  thread.cpu_events.push_back({1000, 3000, static_cast<int32_t>(Category::kCudaApi)});
  thread.overhead_sites.push_back({1200, 2800, OverheadSiteKind::kCupti, false, launch});
  thread.overhead_sites.push_back({5000, 5100, OverheadSiteKind::kCupti, false, odd});
  process.threads.push_back(thread);
  const ProcessCorrection result = CorrectProcess(process, Model({{"cupti:cudaLaunchKernel", 700}}), "", names);
  CHECK(result.removed_ns == Approx(700));
  CHECK(process.threads[0].cpu_events[0].end_ns - process.threads[0].cpu_events[0].begin_ns == 1300);
  REQUIRE(result.uncalibrated.count("cupti:cudaFancyNewThing") == 1);
  CHECK(result.by_site.count("cupti:cudaLaunchKernel_ptsz") == 1);
}

TEST_CASE("a runtime call seen through its driver call is priced as the driver's call", "[correction]") {
  // The runtime's callbacks off: a hooked cudaLaunchKernel reaches the
  // report as the driver's call inside it, named by the hook, flagged as
  // a driver call. Its price is the calibrated driver launch's where there
  // is one, else the runtime launch's; a driver-flagged copy has no
  // calibrated driver member and keeps the runtime copy's price.
  NameTable names;
  const int32_t launch = names.Intern("cudaLaunchKernel");
  const int32_t copy = names.Intern("cudaMemcpyAsync");
  auto run = [&](const cal::OverheadModel& model) {
    ProcessTimeline process;
    process.end_ns = 100'000;
    ThreadTimeline thread = Thread(0, 100'000);
    thread.overhead_sites.push_back({1'000, 5'000, OverheadSiteKind::kCupti, true, launch});
    thread.overhead_sites.push_back({10'000, 30'000, OverheadSiteKind::kCupti, true, copy});
    process.threads.push_back(thread);
    return CorrectProcess(process, model, "", names);
  };
  const ProcessCorrection both =
      run(Model({{"cupti:cudaLaunchKernel", 2400}, {"cupti:cuLaunchKernel", 1200}, {"cupti:cudaMemcpyAsync", 900}}));
  CHECK(both.by_site.at("cupti:cudaLaunchKernel").ns == Approx(1200));
  CHECK(both.by_site.at("cupti:cudaMemcpyAsync").ns == Approx(900));
  CHECK(both.removed_ns == Approx(2100));
  const ProcessCorrection runtime_only = run(Model({{"cupti:cudaLaunchKernel", 2400}, {"cupti:cudaMemcpyAsync", 900}}));
  CHECK(runtime_only.by_site.at("cupti:cudaLaunchKernel").ns == Approx(2400));
  // The same call from the runtime's own callback keeps the runtime price.
  cal::OverheadModel model = Model({{"cupti:cudaLaunchKernel", 2400}, {"cupti:cuLaunchKernel", 1200}});
  CHECK(model.CuptiSite("cudaLaunchKernel", /*driver=*/false) == "cupti:cudaLaunchKernel");
  CHECK(model.CuptiSite("cudaLaunchKernel", /*driver=*/true) == "cupti:cuLaunchKernel");
  CHECK(model.CuptiSite("cuLaunchKernelEx", /*driver=*/true) == "cupti:cuLaunchKernel");
}

TEST_CASE("CUPTI's launch price follows the run's launch speed against the calibration's loop", "[correction]") {
  NameTable names;
  const int32_t launch = names.Intern("cudaLaunchKernel");
  const int32_t driver_launch = names.Intern("cuLaunchKernel");
  const int32_t copy = names.Intern("cudaMemcpyAsync");
  // Launches of 4, 6 and 50 us (one waiting for room in the queue), a
  // copy of 20 us; the calibration's loop took 2 us a launch.
  auto run = [&](double loop_ns) {
    ProcessTimeline process;
    process.end_ns = 1'000'000;
    ThreadTimeline thread = Thread(0, 1'000'000);
    int64_t at = 10'000;
    for (int64_t length : {4'000, 6'000, 50'000}) {
      thread.overhead_sites.push_back({at, at + length, OverheadSiteKind::kCupti, false, launch});
      at += length + 10'000;
    }
    thread.overhead_sites.push_back({at, at + 20'000, OverheadSiteKind::kCupti, false, copy});
    at += 30'000;
    thread.overhead_sites.push_back({at, at + 1'000, OverheadSiteKind::kCupti, true, driver_launch});
    process.threads.push_back(thread);
    cal::OverheadModel model = Model({{"cupti:cudaLaunchKernel", 700}, {"cupti:cudaMemcpyAsync", 1000}});
    model.costs["cupti:cudaLaunchKernel"].loop_ns = loop_ns;
    return CorrectProcess(process, model, "", names);
  };
  // The four launches' (upper) median, the driver's launch priced by the
  // runtime's loop too: 6 us, three times the loop. The copy keeps its
  // price.
  const ProcessCorrection scaled = run(2'000);
  REQUIRE(scaled.cupti_call_speed.count("cupti:cudaLaunchKernel") == 1);
  const CuptiCallSpeed& speed = scaled.cupti_call_speed.at("cupti:cudaLaunchKernel");
  CHECK(speed.calls == 4);
  CHECK(speed.median_call_ns == Approx(6'000));
  CHECK(speed.scale == Approx(3.0));
  CHECK(scaled.by_site.at("cupti:cudaLaunchKernel").ns == Approx(3 * 700 * 3));
  CHECK(scaled.by_site.at("cupti:cuLaunchKernel").ns == Approx(700 * 3));
  CHECK(scaled.by_site.at("cupti:cudaMemcpyAsync").ns == Approx(1000));
  CHECK(scaled.cupti_call_speed.count("cupti:cudaMemcpyAsync") == 0);
  // Launches far slower than the loop are capped; faster ones floored.
  CHECK(run(100).cupti_call_speed.at("cupti:cudaLaunchKernel").scale == Approx(kMaxCuptiScale));
  CHECK(run(1e6).cupti_call_speed.at("cupti:cudaLaunchKernel").scale == Approx(kMinCuptiScale));
  // A calibration without the loop's speed (an older file, the fake
  // CUPTI) prices as before.
  const ProcessCorrection plain = run(0);
  CHECK(plain.cupti_call_speed.at("cupti:cudaLaunchKernel").scale == 1);
  CHECK(plain.by_site.at("cupti:cudaLaunchKernel").ns == Approx(700 * 3));
}

TEST_CASE("counted Python calls are spread over the time outside recorded calls", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 2000;
  ThreadTimeline thread = Thread(0, 2000);
  thread.python = true;
  // A native call fills [500, 1500]; Python runs in [0, 500] and [1500, 2000].
  // Listed among the CPU events too, as the timeline builder lists every
  // native call.
  thread.native_calls.push_back({500, 1500, Category::kBackend, 0, 1});
  thread.cpu_events.push_back({500, 1500, static_cast<int32_t>(Category::kBackend)});
  thread.overhead_windows.push_back({0, 2000, static_cast<uint16_t>(rlscope::wire::OverheadKind::kPythonCall), 10, 0});
  process.threads.push_back(thread);
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, Model({{"python_call@3.11", 20}}), "3.11", names);
  CHECK(result.removed_ns == Approx(200));
  const NativeCall& call = process.threads[0].native_calls[0];
  CHECK(call.begin_ns == 400);  // Half the 200 ns lay before it...
  CHECK(call.end_ns == 1400);   // ...none inside it.
  CHECK(process.end_ns == 1800);
}

TEST_CASE("Python costs of an uncalibrated interpreter are not removed but listed", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 2000;
  ThreadTimeline thread = Thread(0, 2000);
  thread.overhead_windows.push_back({0, 2000, static_cast<uint16_t>(rlscope::wire::OverheadKind::kPythonCall), 10, 0});
  process.threads.push_back(thread);
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, Model({{"python_call@3.11", 20}}), "3.12", names);
  CHECK(result.removed_ns == 0);
  CHECK(result.uncalibrated.at("python_call@3.12") == 10);
}

TEST_CASE("self-timed work is removed exactly; Profiler events leave the corrected view", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 5000;
  ThreadTimeline thread = Thread(0, 5000);
  thread.cpu_events.push_back({1000, 2000, static_cast<int32_t>(Category::kProfiler)});
  thread.overhead_sites.push_back({1000, 2000, OverheadSiteKind::kMeasured});
  thread.overhead_windows.push_back(
      {0, 5000, static_cast<uint16_t>(rlscope::wire::OverheadKind::kThreadSetup), 1, 300});
  process.threads.push_back(thread);
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, Model({}), "", names);
  CHECK(result.removed_ns == Approx(1300));
  CHECK(process.threads[0].cpu_events.empty());
  CHECK(process.end_ns == 3700);
}

TEST_CASE("the Python hook's timed callbacks are noted, not removed again", "[correction]") {
  // Priced 1000 x 100 ns = 100 us; timed 3 x 80 ns x 256 = 61 us: within it.
  ProcessTimeline process;
  process.end_ns = 1'000'000;
  ThreadTimeline thread = Thread(0, 1'000'000);
  thread.overhead_windows.push_back(
      {0, 1'000'000, static_cast<uint16_t>(rlscope::wire::OverheadKind::kPythonCall), 1000, 0});
  thread.overhead_windows.push_back(
      {0, 1'000'000, static_cast<uint16_t>(rlscope::wire::OverheadKind::kPythonHookSample), 3, 240});
  process.threads.push_back(thread);
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, Model({{"python_call@3.11", 100}}), "3.11", names);
  CHECK(result.removed_ns == Approx(100'000));
  CHECK(result.estimated_ns == Approx(100'000));
  CHECK(result.python_hook_samples == 3);
  CHECK(result.python_hook_sample_ns == Approx(240));
  CHECK(process.end_ns == 900'000);
}

TEST_CASE("the Python hook's timed time is removed where its price is lower", "[correction]") {
  // 1000 counted calls priced 20 ns: 20 us. 10 callbacks timed at 100 ns,
  // one in 256: 256 us of hook time, so 236 us more are removed.
  auto thread_with = [](double sample_ns_each) {
    ThreadTimeline thread = Thread(0, 10'000'000);
    thread.overhead_windows.push_back(
        {0, 10'000'000, static_cast<uint16_t>(rlscope::wire::OverheadKind::kPythonCall), 1000, 0});
    thread.overhead_windows.push_back({0, 10'000'000,
                                       static_cast<uint16_t>(rlscope::wire::OverheadKind::kPythonHookSample), 10,
                                       static_cast<int64_t>(10 * sample_ns_each)});
    return thread;
  };
  NameTable names;
  ProcessTimeline slow;
  slow.end_ns = 10'000'000;
  slow.threads.push_back(thread_with(100));
  const ProcessCorrection floored = CorrectProcess(slow, Model({{"python_call@3.11", 20}}), "3.11", names);
  const double timed = 100.0 * 10 * rlscope::wire::kPythonHookSampleStride;
  CHECK(floored.removed_ns == Approx(timed));
  CHECK(floored.by_site.at(kPythonHookFloorSite).ns == Approx(timed - 20'000));
  CHECK(slow.end_ns == 10'000'000 - static_cast<int64_t>(timed));
  // 10 callbacks at 5 ns: 12.8 us timed, below the price: the price stands.
  ProcessTimeline fast;
  fast.end_ns = 10'000'000;
  fast.threads.push_back(thread_with(5));
  const ProcessCorrection priced = CorrectProcess(fast, Model({{"python_call@3.11", 20}}), "3.11", names);
  CHECK(priced.removed_ns == Approx(20'000));
  CHECK(priced.by_site.count(kPythonHookFloorSite) == 0);
}

TEST_CASE("GPU work moves with its launch, keeps its length and its stream order", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 100'000;
  ThreadTimeline thread = Thread(0, 100'000);
  // Two launches; 1000 ns of measured overhead between them.
  thread.gpu_launches.push_back({1000, 1, false, 0});
  thread.overhead_sites.push_back({2000, 3000, OverheadSiteKind::kMeasured});
  thread.gpu_launches.push_back({4000, 2, false, 0});
  process.threads.push_back(thread);
  GpuActivity first, second;
  first.begin_ns = 1500, first.end_ns = 6000, first.correlation_id = 1;
  // Queued behind the first: starts when it ends.
  second.begin_ns = 6000, second.end_ns = 7000, second.correlation_id = 2;
  process.gpu_activities = {second, first};
  NameTable names;
  CorrectProcess(process, Model({}), "", names);
  const GpuActivity& a = process.gpu_activities[1];
  const GpuActivity& b = process.gpu_activities[0];
  CHECK(a.begin_ns == 1500);
  CHECK(a.end_ns == 6000);
  // Its launch moved 1000 ns earlier, but the stream was busy until 6000.
  CHECK(b.begin_ns == 6000);
  CHECK(b.end_ns == 7000);
  CHECK(process.threads[0].gpu_launches[1].time_ns == 3000);
}

TEST_CASE("calibration files round-trip and bad ones fail with a message", "[calibration]") {
  const auto dir = std::filesystem::temp_directory_path() / "rlscope_overhead_model_test";
  std::filesystem::create_directories(dir);
  cal::OverheadModel model = Model({{"cuda_hook", 12.5}, {"python_call@3.11", 40}});
  model.fingerprint.cpu = "Test CPU";
  model.rlscope_version = "9.9";
  model.costs["cupti:cudaLaunchKernel"] = {900, 20, 5, 1000, 3100};
  REQUIRE(cal::WriteOverheadModel((dir / "c.json").string(), model).ok());
  auto read = cal::ReadOverheadModel((dir / "c.json").string());
  REQUIRE(read.ok());
  CHECK(read->fingerprint.cpu == "Test CPU");
  CHECK(read->Cost("cuda_hook").value() == Approx(12.5));
  CHECK(read->costs.at("cupti:cudaLaunchKernel").loop_ns == Approx(3100));
  CHECK(read->costs.at("cuda_hook").loop_ns == 0);  // Not recorded: not written, read as 0.
  CHECK(read->PythonVersions() == std::vector<std::string>{"3.11"});
  CHECK_FALSE(read->Cost("trampoline").has_value());
  std::ofstream(dir / "bad.json") << R"({"schema": "rlscope.calibration/99", "costs": {}})";
  auto bad = cal::ReadOverheadModel((dir / "bad.json").string());
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("rlscope calibrate") != std::string::npos);
  std::ofstream(dir / "junk.json") << "{not json";
  CHECK_FALSE(cal::ReadOverheadModel((dir / "junk.json").string()).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("negative calibrations count as zero", "[calibration]") {
  const cal::OverheadModel model = Model({{"trampoline", -3}});
  CHECK(model.Cost("trampoline").value() == 0);
}

TEST_CASE("a cost whose repetitions disagree more than the cost itself is uncertain", "[calibration]") {
  CHECK(!cal::Uncertain({150, 14, 5, 1000}));
  CHECK(cal::Uncertain({72, 132, 5, 1000}));    // Spread above the value.
  CHECK(cal::Uncertain({-60, 10, 5, 1000}));    // Negative past its spread.
  CHECK(!cal::Uncertain({-2, 12, 5, 1000}));    // About nothing: a disabled builtin call.
  CHECK(!cal::Uncertain({1.3, 19, 5, 1000}));   // Within the floor.
  CHECK(cal::Uncertain({11.5e6, 24e6, 5, 1}));  // A start-up cost as unsure.
}

TEST_CASE("removals in any order give the same map, also past the insertion-sort budget", "[correction]") {
  std::vector<TimeCorrection::Removal> forward, backward;
  for (int i = 0; i < 400; ++i) forward.push_back({10.0 * i, 10.0 * i + 1, 1});
  backward.assign(forward.rbegin(), forward.rend());
  const TimeCorrection a(forward), b(backward);
  CHECK(b.removed_ns() == Approx(400));
  CHECK(b.unplaced_ns() == Approx(0));
  for (int64_t t : {0, 5, 1234, 2001, 3999, 5000}) CHECK(a.Map(t) == b.Map(t));
}

TEST_CASE("a thread the main thread started moves with what the main thread lost before", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 1000;
  ThreadTimeline main = Thread(0, 1000);
  main.overhead_sites.push_back({100, 400, OverheadSiteKind::kMeasured});
  ThreadTimeline worker = Thread(500, 1000);
  worker.cpu_events.push_back({600, 700, static_cast<int32_t>(Category::kNative)});
  process.threads = {main, worker};
  NameTable names;
  CorrectProcess(process, Model({}), "", names);
  CHECK(process.end_ns == 700);
  CHECK(process.threads[1].begin_ns == 200);
  CHECK(process.threads[1].cpu_events[0].begin_ns == 300);
  CHECK(process.threads[1].end_ns == 700);
}

TEST_CASE("nanosecond costs stay exact at large clock values", "[correction]") {
  const int64_t t0 = int64_t{1} << 55;  // About 417 days of uptime.
  ProcessTimeline process;
  process.begin_ns = t0;
  process.end_ns = t0 + 10'000;
  ThreadTimeline thread = Thread(t0, t0 + 10'000);
  for (int i = 0; i < 100; ++i) {
    thread.overhead_sites.push_back({t0 + 50 * i, t0 + 50 * i + 20, OverheadSiteKind::kCudaHook});
  }
  process.threads.push_back(thread);
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, Model({{"cuda_hook", 11.9}}), "", names);
  CHECK(result.removed_ns == Approx(1190).margin(1));
  CHECK(result.unplaced_ns < 1);
}

namespace {

// A main thread of operations a, b, a, b, ... (10 us each) that loses 40 %
// of each to rlscope, and a helper (no operations, no Python) making one
// CUDA call in each b, with a kernel, and losing only its hooks' cost:
// after the correction the main thread has moved far more than the helper.
struct HelperRun {
  static constexpr int kOperations = 20;
  NameTable names;
  int32_t none = names.Intern("(none)");
  int32_t a = names.Intern("a");
  int32_t b = names.Intern("b");
  ProcessTimeline process;

  HelperRun() {
    process.end_ns = 10'000 * kOperations;
    ThreadTimeline main = Thread(0, process.end_ns);
    ThreadTimeline helper = Thread(0, process.end_ns);
    for (int k = 0; k < kOperations; ++k) {
      const int64_t begin = 10'000 * k;
      main.operations.push_back({begin, begin + 10'000, k % 2 == 0 ? a : b});
      main.overhead_sites.push_back({begin + 1000, begin + 5000, OverheadSiteKind::kMeasured});
      if (k % 2 == 0) continue;
      const auto id = static_cast<uint32_t>(k + 1);
      helper.cpu_events.push_back({begin + 6000, begin + 7000, static_cast<int32_t>(Category::kCudaApi)});
      helper.overhead_sites.push_back({begin + 6000, begin + 7000, OverheadSiteKind::kCudaHook});
      helper.gpu_launches.push_back({begin + 6000, id, false, 0});
      GpuActivity kernel;
      kernel.begin_ns = begin + 7500;
      kernel.end_ns = begin + 8500;
      kernel.correlation_id = id;
      process.gpu_activities.push_back(kernel);
    }
    process.threads = {main, helper};
  }

  // The helper's analysis as run_report.cc makes it: inheriting the
  // timeline of the thread `primary`.
  ThreadAnalysis Helper(int primary) {
    const IntervalList inherited = InheritedOperations(process.threads, primary);
    return AnalyseThread(process.threads[1], none, &inherited);
  }
};

// Operations: the breakdown's time per operation.
std::map<int32_t, int64_t> Operations(const Breakdown& breakdown) {
  std::map<int32_t, int64_t> ns;
  for (const auto& [key, value] : breakdown) ns[key.operation] += value;
  return ns;
}

}  // namespace

TEST_CASE("a helper thread's work keeps the inherited operation it had when measured", "[correction]") {
  HelperRun run;
  const ThreadAnalysis measured = run.Helper(PrimaryOperationThread(run.process.threads));
  REQUIRE(measured.active_time_only);
  CHECK(Operations(measured.breakdown) == std::map<int32_t, int64_t>{{run.b, 10'000}});
  const ProcessCorrection correction = CorrectProcess(run.process, Model({{"cuda_hook", 100}}), "", run.names);
  REQUIRE(correction.primary_thread == 0);
  // The main thread moved by 4 us per operation, the helper by 0.1 us per call.
  CHECK(run.process.threads[0].operations.back().begin_ns == 6000 * (HelperRun::kOperations - 1));
  const ThreadAnalysis corrected = run.Helper(correction.primary_thread);
  CHECK(corrected.active_time_only);
  CHECK(Operations(corrected.breakdown) == std::map<int32_t, int64_t>{{run.b, 10'000}});
  REQUIRE(corrected.launches.size() == HelperRun::kOperations / 2);
  for (const ResolvedLaunch& launch : corrected.launches) CHECK(launch.operation == run.b);
}

TEST_CASE("GPU work keeps the operation of its launch across the correction", "[correction]") {
  HelperRun run;
  CorrectProcess(run.process, Model({{"cuda_hook", 100}}), "", run.names);
  const ThreadAnalysis helper = run.Helper(0);
  const IntervalList main = InheritedOperations(run.process.threads, 0);
  const GpuAnalysis gpu = AnalyseGpu(run.process, helper.launches, main, GpuBusyIntervals(run.process.gpu_activities),
                                     "cupti", true, run.names);
  REQUIRE(gpu.by_launch.size() == 1);
  CHECK(gpu.by_launch[0].operation == "b");
  CHECK(gpu.by_launch[0].count == HelperRun::kOperations / 2);
}

TEST_CASE("a CUDA call keeps its operation where the correction removes all time up to the operation's end",
          "[correction]") {
  ProcessTimeline process;
  process.end_ns = 10'000;
  ThreadTimeline thread = Thread(0, 10'000);
  thread.operations = {{1000, 5000, 7}, {5000, 9000, 8}};
  // A launch at 4000 and rlscope's own work from there to the operation's
  // end: corrected, the launch lies at the next operation's start.
  thread.gpu_launches.push_back({4000, 1, false, 0});
  thread.overhead_sites.push_back({4000, 5000, OverheadSiteKind::kMeasured});
  process.threads.push_back(thread);
  NameTable names;
  CorrectProcess(process, Model({}), "", names);
  CHECK(process.threads[0].gpu_launches[0].time_ns == process.threads[0].operations[1].begin_ns);
  const ThreadAnalysis analysis = AnalyseThread(process.threads[0], 0);
  REQUIRE(analysis.launches.size() == 1);
  CHECK(analysis.launches[0].operation == 7);
}

TEST_CASE("a thread's time keeps the GPU overlap it had when measured", "[correction]") {
  ProcessTimeline process;
  process.end_ns = 10'000;
  ThreadTimeline main = Thread(0, 10'000);
  main.operations = {{0, 10'000, 7}};
  main.overhead_sites.push_back({1000, 5000, OverheadSiteKind::kMeasured});
  // Launched by a helper that lost nothing: the kernel does not move,
  // while the main thread's [6000, 7000) moves to [2000, 3000).
  ThreadTimeline helper = Thread(0, 10'000);
  helper.cpu_events.push_back({5500, 5600, static_cast<int32_t>(Category::kCudaApi)});
  helper.gpu_launches.push_back({5500, 1, false, 0});
  GpuActivity kernel;
  kernel.begin_ns = 6000;
  kernel.end_ns = 7000;
  kernel.correlation_id = 1;
  process.gpu_activities = {kernel};
  process.threads = {main, helper};
  NameTable names;
  CorrectProcess(process, Model({}), "", names);
  REQUIRE(process.gpu_activities[0].begin_ns == 6000);
  const IntervalList busy = GpuBusyIntervals(process.gpu_activities);
  const Breakdown breakdown = AnalyseThread(process.threads[0], 0, nullptr, &busy).breakdown;
  const auto at = [&](Resource resource) {
    const auto it = breakdown.find({7, resource, Category::kNative});
    return it == breakdown.end() ? 0 : it->second;
  };
  CHECK(at(Resource::kCpuGpu) == 1000);
  CHECK(at(Resource::kCpu) == 6000 - 1000);
}

TEST_CASE("an ordered series merged in, before or among the others, gives the same map", "[correction]") {
  // Stretches overlapping across the two series, some above a rate of 1.
  const std::vector<TimeCorrection::Removal> plain = {{5, 25, 10}, {40, 41, 1}, {30, 33, 3}, {0, 2, 2}, {50, 52, 4}};
  // Ordered stretches that meet, at the same rate and at another.
  const std::vector<TimeCorrection::Removal> ordered = {{1, 6, 2},   {6, 11, 2},  {11, 20, 18},
                                                        {20, 30, 5}, {32, 36, 2}, {51, 60, 9}};
  std::vector<TimeCorrection::Removal> all = plain;
  all.insert(all.end(), ordered.begin(), ordered.end());
  const TimeCorrection reference(all);
  TimeCorrection after(0), among(0);
  after.Reserve(plain.size());
  for (const auto& r : plain) after.Add(r.begin, r.end, r.amount);
  for (const auto& r : ordered) after.AddOrdered(r.begin, r.end, r.amount);
  after.Finish();
  for (size_t i = 0; i < std::max(plain.size(), ordered.size()); ++i) {  // An Add after an AddOrdered.
    if (i < plain.size()) among.Add(plain[i].begin, plain[i].end, plain[i].amount);
    if (i < ordered.size()) among.AddOrdered(ordered[i].begin, ordered[i].end, ordered[i].amount);
  }
  among.Finish();
  CHECK(after.removed_ns() == Approx(reference.removed_ns()));
  CHECK(among.removed_ns() == Approx(reference.removed_ns()));
  CHECK(after.unplaced_ns() == Approx(reference.unplaced_ns()));
  // Above a rate of 1: [1, 2] 0.4, [11, 20] 13.5, [32, 33] 0.5, [50, 51] 1,
  // [51, 52] 2.
  CHECK(reference.unplaced_ns() == Approx(17.4));
  for (int64_t t = -1; t <= 62; ++t) {
    CHECK(after.Map(t) == reference.Map(t));
    CHECK(among.Map(t) == reference.Map(t));
  }
}

TEST_CASE("a restored stretch gives back removed time evenly; later times keep the rest removed", "[correction]") {
  TimeCorrection correction(std::vector<TimeCorrection::Removal>{{10, 20, 10}});
  correction.Restore({{30, 40, 4}});
  CHECK(correction.Map(5) == 5);
  CHECK(correction.Map(30) == 20);
  CHECK(correction.Map(35) == 27);
  // The measured 10 ns from 30 to 40 last 14 ns corrected.
  CHECK(correction.Map(40) == 34);
  CHECK(correction.Map(100) == 94);
}

namespace {

// A thread that launches ten kernels 10 us apart (500 ns calls, each with
// a 100 ns hook cost) and then calls `last_call` (100 ns hook cost) until
// 20 ns after `last_end`; the process ends at 200 us.
ProcessTimeline LaunchesThenCall(NameTable& names, const std::vector<GpuActivity>& gpu, const char* last_call,
                                 int64_t last_end) {
  ProcessTimeline process;
  process.end_ns = 200'000;
  ThreadTimeline thread = Thread(0, 200'000);
  const auto cuda = static_cast<int32_t>(Category::kCudaApi);
  for (int i = 0; i < 10; ++i) {
    const int64_t begin = 1000 + i * 10'000;
    thread.cpu_events.push_back({begin, begin + 500, cuda});
    thread.overhead_sites.push_back(
        {begin, begin + 500, OverheadSiteKind::kCudaHook, false, names.Intern("cudaLaunchKernel")});
  }
  thread.cpu_events.push_back({101'000, last_end + 20, cuda});
  thread.overhead_sites.push_back(
      {101'000, last_end + 20, OverheadSiteKind::kCudaHook, false, names.Intern(last_call)});
  process.threads.push_back(thread);
  process.gpu_activities = gpu;
  return process;
}

GpuActivity Kernel(int64_t begin, int64_t end) {
  GpuActivity kernel;
  kernel.begin_ns = begin;
  kernel.end_ns = end;
  return kernel;
}

// Ten kernels back to back from 1600 (the first launch's end and hook
// cost) to 148 us: the GPU bounds the program.
std::vector<GpuActivity> QueuedKernels() {
  std::vector<GpuActivity> gpu;
  for (int i = 0; i < 10; ++i) gpu.push_back(Kernel(1600 + i * 14'840, 1600 + (i + 1) * 14'840 - 500));
  return gpu;
}

}  // namespace

TEST_CASE("a wait for queued GPU work gets back what the CPU's costs took off while the GPU ran", "[correction]") {
  // The wait ends with the queue. Unprofiled, faster launches would not
  // have ended it sooner.
  NameTable names;
  const std::vector<GpuActivity> gpu = QueuedKernels();
  const int64_t gpu_end = gpu.back().end_ns;
  ProcessTimeline process = LaunchesThenCall(names, gpu, "cudaStreamSynchronize", gpu_end);
  const ProcessCorrection result = CorrectProcess(process, Model({{"cuda_hook", 100}}), "", names);
  CHECK(result.removed_ns == Approx(1100));
  // The first launch's cost (1500-1600) delayed the GPU's start; the nine
  // later launches' costs came while it ran. The wait ends, corrected, when
  // the GPU goes idle 100 ns earlier (its return taken as instant): 880
  // of those 900 ns go back to it. Its own cost lies after it.
  CHECK(result.wait_restored_ns == Approx(880));
  CHECK(result.main_thread_removed_ns == 220);
  CHECK(process.end_ns == 199'780);
  CHECK(process.threads[0].cpu_events.back().end_ns == gpu_end - 100);
}

TEST_CASE("only calls that can wait for the GPU get time back", "[correction]") {
  // The same queue, but the call that returns as it ends is a launch: it
  // did not wait for it.
  NameTable names;
  const std::vector<GpuActivity> gpu = QueuedKernels();
  ProcessTimeline process = LaunchesThenCall(names, gpu, "cudaLaunchKernel", gpu.back().end_ns);
  const ProcessCorrection result = CorrectProcess(process, Model({{"cuda_hook", 100}}), "", names);
  CHECK(result.wait_restored_ns == Approx(0));
  CHECK(result.main_thread_removed_ns == 1100);
}

TEST_CASE("a wait for the GPU's last kernel alone keeps the CPU's costs removed", "[correction]") {
  // The CPU bounds the program: each kernel runs 1 us right after its
  // launch and the GPU idles 9 us between them, so the GPU started the
  // last one after all the launches' costs but its own.
  NameTable names;
  std::vector<GpuActivity> gpu;
  for (int i = 0; i < 10; ++i) gpu.push_back(Kernel(1600 + i * 10'000, 2600 + i * 10'000));
  // The last kernel runs long, into the wait.
  gpu.back().end_ns = 120'000;
  ProcessTimeline process = LaunchesThenCall(names, gpu, "cudaDeviceSynchronize", 120'000);
  const ProcessCorrection result = CorrectProcess(process, Model({{"cuda_hook", 100}}), "", names);
  CHECK(result.wait_restored_ns == Approx(0));
  CHECK(result.main_thread_removed_ns == 1100);
  CHECK(process.end_ns == 198'900);
}

namespace {

// Ten kernels, kernel i from 1600 + 10 us i to `first_end` + 10 us i, the
// last one running long into a synchronize that ends with it at 120 us;
// launch i entered at 1000 + 10 us i and returned `returned_after` later
// (0: return unknown). The correction of that process.
ProcessCorrection TenLaunchesIntoAWait(int64_t first_end, int64_t returned_after) {
  NameTable names;
  std::vector<GpuActivity> gpu;
  for (int i = 0; i < 10; ++i) {
    gpu.push_back(Kernel(1600 + i * 10'000, first_end + i * 10'000));
    gpu.back().correlation_id = static_cast<uint32_t>(i + 1);
  }
  gpu.back().end_ns = 120'000;
  ProcessTimeline process = LaunchesThenCall(names, gpu, "cudaStreamSynchronize", 120'000);
  for (int i = 0; i < 10; ++i) {
    const int64_t entry = 1000 + i * 10'000;
    process.threads[0].gpu_launches.push_back({entry, static_cast<uint32_t>(i + 1), false, 0, kOperationUndecided,
                                               returned_after > 0 ? entry + returned_after : 0});
  }
  return CorrectProcess(process, Model({{"cuda_hook", 100}}), "", names);
}

}  // namespace

TEST_CASE("work launched after the GPU went idle starts a new streak", "[correction]") {
  // Kernels 1 us apart, but each launched after the one before it ended:
  // the GPU waited for the CPU between them, so the wait for the last,
  // long one keeps the launches' costs removed.
  const ProcessCorrection result = TenLaunchesIntoAWait(10'600, 0);
  CHECK(result.wait_restored_ns == Approx(0));
  CHECK(result.main_thread_removed_ns == 1100);
}

TEST_CASE("work whose launch returned while the GPU was busy joins the streak ahead", "[correction]") {
  // Each launch returns 100 ns before the kernel ahead ends: the GPU ran
  // the ten from its queue, so the wait gets back the nine later launches'
  // costs but the 20 ns the call ran after the GPU went idle (as when the
  // launches are unknown).
  const ProcessCorrection result = TenLaunchesIntoAWait(11'500, 400);
  CHECK(result.wait_restored_ns == Approx(880));
}

TEST_CASE("work whose launch returned after the GPU went idle starts a new streak", "[correction]") {
  // Each launch is entered before the kernel before it ends, but returns
  // 300 ns after: the GPU idled, waiting for the CPU, although its kernels
  // lie 400 ns apart. The wait for the last, long one keeps the launches'
  // costs removed (judged by entry, all ten would form one queued streak).
  const ProcessCorrection result = TenLaunchesIntoAWait(11'200, 500);
  CHECK(result.wait_restored_ns == Approx(0));
  CHECK(result.main_thread_removed_ns == 1100);
}

TEST_CASE("a CUDA call that returns well after the GPU went idle is no wait for it", "[correction]") {
  // It was busy with its own work when the GPU finished, longer than the
  // CPU's costs removed while the GPU ran.
  NameTable names;
  const std::vector<GpuActivity> gpu = QueuedKernels();
  ProcessTimeline process = LaunchesThenCall(names, gpu, "cudaMemcpy", gpu.back().end_ns + 15'000 - 20);
  const ProcessCorrection result = CorrectProcess(process, Model({{"cuda_hook", 100}}), "", names);
  CHECK(result.wait_restored_ns == Approx(0));
  CHECK(result.main_thread_removed_ns == 1100);
}
