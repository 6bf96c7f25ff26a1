// The Wait category: blocked time of a thread (wire kPythonWait) from the
// stream to every view: its own category in the thread's rows, in no
// operation's rows, not a transition, and the correction leaves it alone.
#include <catch2/catch.hpp>

#include "format/trace_reader.h"
#include "format/wire_format.h"
#include "preload/batch_encoder.h"
#include "report/overhead_correction.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "report/run_report.h"
#include "report/thread_analysis.h"
#include "report/timeline_builder.h"
#include "test/report/timeline_fixtures.h"

using namespace rlscope::report;
using rlscope::preload::BatchEncoder;
using rlscope::report::fixtures::Thread;
namespace wire = rlscope::wire;
namespace cal = rlscope::calibration;

namespace {

constexpr int32_t kNone = 0;
constexpr int32_t kStep = 1;
constexpr int32_t kWait = static_cast<int32_t>(Category::kWait);

int64_t At(const Breakdown& breakdown, int32_t operation, Category category) {
  const auto it = breakdown.find({operation, Resource::kCpu, category});
  return it == breakdown.end() ? 0 : it->second;
}

// A Python thread over [begin, end] blocked over `waits`.
ThreadTimeline PythonThread(uint32_t tid, int64_t begin, int64_t end, IntervalList waits) {
  ThreadTimeline thread = Thread(begin, end);
  thread.tid = tid;
  thread.python = true;
  for (Interval wait : waits) {
    wait.label = kWait;
    thread.cpu_events.push_back(wait);
  }
  return thread;
}

}  // namespace

TEST_CASE("a kPythonWait event is the thread's Wait, not a native call", "[wait]") {
  NameTable names;
  TimelineBuilder builder(names);
  builder.CollectOverhead(true);
  BatchEncoder encoder;
  rlscope::preload::ProcessIdentity identity;
  identity.pid = 10;
  auto hello = encoder.EncodeHello(identity, "tsc");
  std::vector<uint8_t> bytes(hello.begin(), hello.end());
  builder.AddFrame(**rlscope::collector::VerifyFrame(bytes.data(), bytes.size()));
  encoder.BeginBatch(1, 0);
  const wire::Event events[] = {
      wire::Event(0, 0, 0, static_cast<uint16_t>(wire::EventKind::kPythonThread), 0, 0),
      wire::Event(100, 900, 0, static_cast<uint16_t>(wire::EventKind::kPythonWait), 12, 0x1234)};
  encoder.AddThreadEvents(10, 10, 2, 0, {}, [&](wire::Event* out) {
    for (size_t i = 0; i < 2; ++i) out[i] = events[i];
  });
  auto batch = encoder.FinishBatch();
  bytes.assign(batch.begin(), batch.end());
  builder.AddFrame(**rlscope::collector::VerifyFrame(bytes.data(), bytes.size()));
  const ProcessTimeline process = builder.Finish();
  REQUIRE(process.problems.empty());  // A known kind: not skipped.
  REQUIRE(process.threads.size() == 1);
  const ThreadTimeline& thread = process.threads[0];
  REQUIRE(thread.cpu_events.size() == 1);
  CHECK(thread.cpu_events[0].begin_ns == 100);
  CHECK(thread.cpu_events[0].end_ns == 900);
  CHECK(thread.cpu_events[0].label == kWait);
  CHECK(thread.native_calls.empty());          // Not in the Python-lines table.
  REQUIRE(thread.overhead_sites.size() == 1);  // The hook's cost, as for any transition.
  CHECK(thread.overhead_sites[0].kind == OverheadSiteKind::kPythonTransition);
}

TEST_CASE("a blocked Python thread's time is Wait, not Python, and no transition", "[wait]") {
  ThreadTimeline thread = PythonThread(1, 0, 1000, {{100, 900, 0}});
  thread.operations = {{0, 1000, kStep}};
  const ThreadAnalysis analysis = AnalyseThread(thread, kNone);
  CHECK(At(analysis.breakdown, kStep, Category::kWait) == 800);
  CHECK(At(analysis.breakdown, kStep, Category::kPython) == 200);
  CHECK(analysis.transitions.empty());
  CHECK(analysis.lines.empty());
}

TEST_CASE("process rows leave Wait out; thread rows and wait_ns keep it", "[wait]") {
  NameTable names;
  ProcessTimeline process;
  process.pid = 7;
  process.begin_ns = 0;
  process.end_ns = 10'000;
  // The main thread works all along in one operation; a writer thread
  // (no operation of its own) waits on a queue but for two short events.
  ThreadTimeline main_thread = PythonThread(7, 0, 10'000, {});
  main_thread.name = "MainThread";
  const int32_t step = names.Intern("step");
  main_thread.operations = {{0, 10'000, step}};
  ThreadTimeline writer = PythonThread(8, 1000, 10'000, {{1000, 5000, 0}, {5100, 10'000, 0}});
  writer.name = "writer";
  process.threads = {main_thread, writer};
  RunMetadata metadata;
  metadata.command = {"python3", "train.py"};
  std::vector<ProcessTimeline> processes;
  processes.push_back(process);
  const RunReport report = BuildRunReport(metadata, std::move(processes), names, {});
  REQUIRE(report.processes.size() == 1);
  const ProcessReport& result = report.processes[0];
  CHECK(result.wait_ns == 8900);
  CHECK(result.traced_thread_ns == 10'000 + 100);  // Work only.
  int64_t rows_ns = 0;
  for (const BreakdownRow& row : report.rows) {
    CHECK(row.category != Category::kWait);
    rows_ns += row.ns;
  }
  CHECK(rows_ns == 10'100);
  // The idle writer adds its 100 ns of work, nothing of its wait.
  int64_t writer_wait = 0, writer_python = 0;
  for (const BreakdownRow& row : result.threads[1].rows) {
    (row.category == Category::kWait ? writer_wait : writer_python) += row.ns;
  }
  CHECK(writer_wait == 8900);
  CHECK(writer_python == 100);

  const std::string json = FormatReportJson(report);
  CHECK(json.find("\"wait_ns\": 8900") != std::string::npos);
  CHECK(json.find("\"category\": \"Wait\"") != std::string::npos);
  const std::string text = FormatReportText(report);
  CHECK(text.find("Wait: threads blocked 8.9 us") != std::string::npos);
  CHECK(text.find("thread 8 (writer): Wait 8.9 us of its 9.0 us") != std::string::npos);
  const std::string html = FormatReportHtml(report);
  CHECK(html.find(">Wait</th>") != std::string::npos);
}

TEST_CASE("the correction spreads no Python cost into blocked time", "[wait]") {
  ProcessTimeline process;
  process.end_ns = 2000;
  // Blocked over [500, 1500]; Python runs in [0, 500] and [1500, 2000].
  ThreadTimeline thread = PythonThread(1, 0, 2000, {{500, 1500, 0}});
  thread.overhead_windows.push_back({0, 2000, static_cast<uint16_t>(wire::OverheadKind::kPythonCall), 10, 0});
  process.threads.push_back(thread);
  NameTable names;
  cal::OverheadModel model;
  model.costs["python_call@3.11"] = {20, 2, 5, 1000};
  const ProcessCorrection result = CorrectProcess(process, model, "3.11", names);
  CHECK(result.removed_ns == Approx(200));
  const Interval& wait = process.threads[0].cpu_events[0];
  CHECK(wait.label == kWait);   // Kept (unlike Profiler time)...
  CHECK(wait.begin_ns == 400);  // ...shifted by the cost before it...
  CHECK(wait.end_ns == 1400);   // ...and as long as it was.
}
