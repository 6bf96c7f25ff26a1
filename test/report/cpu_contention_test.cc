#include "report/cpu_contention.h"

#include <catch2/catch.hpp>
#include <vector>

#include "report/category.h"
#include "report/overhead_correction.h"
#include "test/report/timeline_fixtures.h"

using namespace rlscope::report;
using rlscope::report::fixtures::Thread;
namespace cal = rlscope::calibration;

namespace {

constexpr int64_t kMs = 1'000'000;

}  // namespace

TEST_CASE("a cost is scaled by the thread's waits for a CPU where it was paid", "[cpu_contention]") {
  const std::vector<CpuWait> waits = {
      {0, 200 * kMs, 100 * kMs, 100 * kMs},         // Half its runnable time waiting: x2.
      {200 * kMs, 400 * kMs, 200 * kMs, 0},         // Quiet: x1.
      {400 * kMs, 600 * kMs, 10 * kMs, 500 * kMs},  // Capped.
      {600 * kMs, 800 * kMs, kMs / 2, 50 * kMs},    // Barely ran: says too little.
      // Woken 500 times, 100 us each: an idle machine's wake-ups, not a share.
      {800 * kMs, 1000 * kMs, 20 * kMs, 50 * kMs, 500},
      // Preempted 10 times, 3 ms each: a busy machine's time slices.
      {1000 * kMs, 1200 * kMs, 30 * kMs, 30 * kMs, 10},
  };
  const CpuContention contention(waits);
  CHECK(contention.Any());
  CHECK(contention.Scale(-1) == Approx(2.0));  // Before the first reading: the first span's.
  CHECK(contention.Scale(0) == Approx(2.0));
  CHECK(contention.Scale(199 * kMs) == Approx(2.0));
  CHECK(contention.Scale(200 * kMs) == 1.0);  // A span's end belongs to the next.
  CHECK(contention.Scale(300 * kMs) == 1.0);
  CHECK(contention.Scale(450 * kMs) == kMaxCpuWaitScale);
  CHECK(contention.Scale(700 * kMs) == 1.0);
  CHECK(contention.Scale(900 * kMs) == 1.0);
  CHECK(contention.Scale(1100 * kMs) == Approx(1.0 + 28.0 / 30.0));
  CHECK(contention.Scale(1300 * kMs) == 1.0);
  CHECK_FALSE(CpuContention({}).Any());
}

TEST_CASE("before a reading, the next one stands for the time", "[cpu_contention]") {
  // Barely ran, then quiet, then busy: before 100 ms the factor is 1.
  const std::vector<CpuWait> quiet_first = {{0, 100 * kMs, kMs / 2, 50 * kMs},
                                            {100 * kMs, 200 * kMs, 50 * kMs, 0},
                                            {200 * kMs, 300 * kMs, 50 * kMs, 50 * kMs}};
  const CpuContention quiet(quiet_first);
  CHECK(quiet.Scale(-5 * kMs) == 1.0);
  CHECK(quiet.Scale(50 * kMs) == 1.0);  // Inside the span that said too little.
  CHECK(quiet.Scale(250 * kMs) == Approx(2.0));
  // A first reading in which the thread barely ran says 1 for the time
  // before it, whatever later spans say.
  const std::vector<CpuWait> idle_first = {{0, 100 * kMs, kMs / 2, 50 * kMs},
                                           {100 * kMs, 200 * kMs, 20 * kMs, 60 * kMs}};
  const CpuContention idle(idle_first);
  CHECK(idle.Scale(-5 * kMs) == 1.0);
  CHECK(idle.Scale(150 * kMs) == Approx(4.0));
  // A thread first read at 300 ms, busy then: its start-up costs are
  // scaled alike; after the last reading nothing is known.
  const std::vector<CpuWait> busy_first = {{300 * kMs, 500 * kMs, 40 * kMs, 120 * kMs}};
  const CpuContention busy(busy_first);
  CHECK(busy.Scale(0) == Approx(4.0));
  CHECK(busy.Scale(299 * kMs) == Approx(4.0));
  CHECK(busy.Scale(500 * kMs) == 1.0);
  // Readings restart with each capture window: the gap before the second
  // window's first reading takes that reading's factor.
  const std::vector<CpuWait> windows = {{0, 100 * kMs, 50 * kMs, 50 * kMs}, {300 * kMs, 400 * kMs, 25 * kMs, 50 * kMs}};
  const CpuContention windowed(windows);
  CHECK(windowed.Scale(50 * kMs) == Approx(2.0));
  CHECK(windowed.Scale(100 * kMs) == Approx(3.0));  // The first window's end: the gap's.
  CHECK(windowed.Scale(200 * kMs) == Approx(3.0));
  CHECK(windowed.Scale(350 * kMs) == Approx(3.0));
  CHECK(windowed.Scale(450 * kMs) == 1.0);
}

TEST_CASE("spans out of order are not trusted", "[cpu_contention]") {
  const std::vector<CpuWait> waits = {{100 * kMs, 300 * kMs, 100 * kMs, 100 * kMs},
                                      {200 * kMs, 400 * kMs, 100 * kMs, 300 * kMs}};
  const CpuContention contention(waits);
  CHECK(contention.Scale(250 * kMs) == Approx(2.0));
  CHECK(contention.Scale(350 * kMs) == 1.0);
  // Also after a span that scales nothing.
  const std::vector<CpuWait> after_quiet = {{100 * kMs, 300 * kMs, 100 * kMs, 0},
                                            {200 * kMs, 400 * kMs, 100 * kMs, 300 * kMs}};
  const CpuContention quiet_first(after_quiet);
  CHECK(quiet_first.Scale(50 * kMs) == 1.0);
  CHECK(quiet_first.Scale(350 * kMs) == 1.0);
  CHECK_FALSE(quiet_first.Any());
}

TEST_CASE("the correction removes what a cost took on a busy machine, and says how much waits added",
          "[cpu_contention][correction]") {
  // Four CUDA calls priced at 100 ns: two in a stretch where the thread
  // waited for a CPU as long as it ran, two where it never waited.
  auto corrected = [](bool busy) {
    ProcessTimeline process;
    process.begin_ns = 0;
    process.end_ns = 1000 * kMs;
    ThreadTimeline thread = Thread(0, 1000 * kMs);
    for (int i = 0; i < 4; ++i) {
      const int64_t begin = (100 + 200 * i) * kMs;
      thread.cpu_events.push_back({begin, begin + 500, static_cast<int32_t>(Category::kCudaApi)});
      thread.overhead_sites.push_back({begin, begin + 500, OverheadSiteKind::kCudaHook});
    }
    // First read at 50 ms: the thread's start takes that span's factor.
    if (busy) thread.cpu_waits = {{50 * kMs, 400 * kMs, 175 * kMs, 175 * kMs}, {400 * kMs, 1000 * kMs, 300 * kMs, 0}};
    process.threads.push_back(thread);
    cal::OverheadModel model;
    model.costs["cuda_hook"] = {100, 10, 5, 1000};
    NameTable names;
    return CorrectProcess(process, model, "", names);
  };
  const ProcessCorrection quiet = corrected(false);
  CHECK(quiet.removed_ns == Approx(400));
  CHECK(quiet.cpu_wait_ns == 0);
  const ProcessCorrection busy = corrected(true);
  CHECK(busy.removed_ns == Approx(600));
  CHECK(busy.cpu_wait_ns == Approx(200));
  CHECK(busy.estimated_ns == Approx(600));
  // Its start is before the first reading: the next span's factor.
  CHECK(quiet.main_thread_start_scale == 1.0);
  CHECK(busy.main_thread_start_scale == Approx(2.0));
  // The site's own tally stays the calibrated price.
  CHECK(busy.by_site.at("cuda_hook").ns == Approx(400));
}

TEST_CASE("what rlscope timed itself is not scaled; the Python hook's check sees the scaled prices",
          "[cpu_contention][correction]") {
  ProcessTimeline process;
  process.begin_ns = 0;
  process.end_ns = 1000 * kMs;
  ThreadTimeline thread = Thread(0, 1000 * kMs);
  thread.python = true;
  // A stack sample rlscope timed (10 us of wall time) and a Python
  // transition priced at 100 ns, where the thread waited as long as it ran.
  thread.cpu_events.push_back({100 * kMs, 100 * kMs + 10'000, static_cast<int32_t>(Category::kProfiler)});
  thread.overhead_sites.push_back({100 * kMs, 100 * kMs + 10'000, OverheadSiteKind::kMeasured});
  thread.overhead_sites.push_back({200 * kMs, 200 * kMs + 500, OverheadSiteKind::kPythonTransition});
  thread.cpu_waits = {{0, 1000 * kMs, 400 * kMs, 400 * kMs}};
  process.threads.push_back(thread);
  cal::OverheadModel model;
  model.costs[cal::PythonSite(cal::kPythonTransition, "3.12")] = {100, 10, 5, 1000};
  NameTable names;
  const ProcessCorrection result = CorrectProcess(process, model, "3.12", names);
  CHECK(result.removed_ns == Approx(10'000 + 200));
  CHECK(result.cpu_wait_ns == Approx(100));
  CHECK(result.python_cpu_wait_ns == Approx(100));
  CHECK(result.by_site.at("measured").ns == Approx(10'000));
}
