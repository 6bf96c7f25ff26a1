// One decoded run fed to many sinks (run_sink.h), and the analysis of a
// decoded run with a calibration held in memory (AnalyseRun).
#include "report/run_sink.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "report/run_report.h"
#include "test/report/timeline_fixtures.h"

using namespace rlscope::report;
using rlscope::report::fixtures::Thread;
namespace cal = rlscope::calibration;

namespace {

// A decoded run of one process (pid 7) with one thread over [0, wall_ns],
// kept for the correction or not.
DecodedRun OneThreadRun(int64_t wall_ns, bool for_correction) {
  DecodedRun run;
  run.metadata.command = {"python3", "train.py"};
  run.metadata.wall_ns = wall_ns;
  run.names.Intern("(none)");
  ProcessTimeline process;
  process.pid = 7;
  process.begin_ns = 0;
  process.end_ns = wall_ns;
  process.ended_cleanly = true;
  ThreadTimeline thread = Thread(0, wall_ns);
  thread.tid = 7;
  process.threads = {thread};
  run.processes = {process};
  run.kept_for_correction = for_correction;
  return run;
}

// OneThreadRun whose thread runs `step` over [0, 10 us], with one recorded
// 1 us transition at 4 us (an overhead site of the Python hook) when kept
// for the correction.
DecodedRun OneStepRun(bool for_correction) {
  DecodedRun run = OneThreadRun(10'000, for_correction);
  ThreadTimeline& thread = run.processes[0].threads[0];
  thread.operations = {{0, 10'000, run.names.Intern("step")}};
  if (for_correction) thread.overhead_sites.push_back({4000, 5000, OverheadSiteKind::kTrampoline});
  return run;
}

int64_t StepNs(const std::vector<BreakdownRow>& rows) {
  int64_t ns = 0;
  for (const BreakdownRow& row : rows) ns += row.operation == "step" ? row.ns : 0;
  return ns;
}

// A sink that notes what it was given, in one shared log.
class NotingSink : public RunSink {
 public:
  NotingSink(std::string name, bool wants_report, std::vector<std::string>& log)
      : name_(std::move(name)), wants_report_(wants_report), log_(log) {}
  void Timelines(const DecodedRun& run) override {
    log_.push_back(name_ + " timelines of " + std::to_string(run.processes.size()) + " process(es)");
  }
  bool WantsReport() const override { return wants_report_; }
  void Report(const RunReport& report) override {
    log_.push_back(name_ + " report of " + std::to_string(report.processes.size()) + " process(es)");
  }

 private:
  std::string name_;
  bool wants_report_;
  std::vector<std::string>& log_;
};

}  // namespace

TEST_CASE("every sink sees the timelines first, then the one analysis", "[run_sink]") {
  std::vector<std::string> log;
  NotingSink chrome("chrome", false, log), csv("csv", true, log), text("text", true, log);
  RunSink* const sinks[] = {&chrome, &csv, &text};
  const std::optional<RunReport> report = FeedSinks(OneStepRun(false), {}, sinks);
  REQUIRE(report.has_value());
  CHECK(StepNs(report->rows) == 10'000);
  CHECK(log == std::vector<std::string>{"chrome timelines of 1 process(es)", "csv timelines of 1 process(es)",
                                        "text timelines of 1 process(es)", "csv report of 1 process(es)",
                                        "text report of 1 process(es)"});
}

TEST_CASE("no analysis when no sink wants the report", "[run_sink]") {
  std::vector<std::string> log;
  NotingSink chrome("chrome", false, log), perfetto("perfetto", false, log);
  RunSink* const sinks[] = {&chrome, &perfetto};
  CHECK_FALSE(FeedSinks(OneStepRun(false), {}, sinks).has_value());
  CHECK(log.size() == 2);
}

TEST_CASE("a calibration held in memory corrects the run", "[run_sink]") {
  cal::OverheadModel model;
  model.costs[std::string(cal::kTrampoline)] = {250, 5, 5, 1000};
  AnalysisOptions options;
  options.model = &model;
  const RunReport report = AnalyseRun(OneStepRun(true), options);
  REQUIRE(report.corrected);
  CHECK(report.calibration_file.empty());  // Named nowhere: it was in memory.
  CHECK(StepNs(report.uncorrected_rows) == 10'000);
  CHECK(StepNs(report.rows) == 10'000 - 250);
  REQUIRE(report.corrected_wall_ns.has_value());
  CHECK(*report.corrected_wall_ns == 10'000 - 250);
}

TEST_CASE("the process's fixed cost is scaled by its first thread's waits for a CPU at start", "[run_sink]") {
  // A process of 100 ms (no Python seen) whose thread, first read at 10 ms, waited
  // for a CPU as long as it ran: its start-up, priced 1 us of CPU time,
  // took it 2 us.
  auto corrected_wall = [](bool busy) {
    DecodedRun run = OneThreadRun(100'000'000, true);
    if (busy) run.processes[0].threads[0].cpu_waits = {{10'000'000, 100'000'000, 45'000'000, 45'000'000}};
    cal::OverheadModel model;
    model.costs[std::string(cal::kNativeProcess)] = {1000, 5, 5, 1000};
    AnalysisOptions options;
    options.model = &model;
    const RunReport report = AnalyseRun(std::move(run), options);
    REQUIRE(report.corrected_wall_ns.has_value());
    return *report.corrected_wall_ns;
  };
  CHECK(corrected_wall(false) == 100'000'000 - 1000);
  CHECK(corrected_wall(true) == 100'000'000 - 2000);
}

TEST_CASE("a run decoded without the correction's data stays uncorrected, saying why", "[run_sink]") {
  cal::OverheadModel model;
  model.costs[std::string(cal::kTrampoline)] = {250, 5, 5, 1000};
  DecodedRun run = OneStepRun(false);
  run.correction_dropped = "correcting its 9 GB of trace needs about 60 GB of memory";
  AnalysisOptions options;
  options.model = &model;
  const RunReport report = AnalyseRun(std::move(run), options);
  CHECK_FALSE(report.corrected);
  CHECK(report.correction_skipped_for_memory);
  CHECK(report.correction_message == "uncorrected: correcting its 9 GB of trace needs about 60 GB of memory");
  CHECK(StepNs(report.rows) == 10'000);
}

TEST_CASE("without a model the report says why it is uncorrected", "[run_sink]") {
  AnalysisOptions options;
  options.uncorrected_why = "no calibration was found for the machine of this run";
  const RunReport report = AnalyseRun(OneStepRun(false), options);
  CHECK_FALSE(report.corrected);
  CHECK_FALSE(report.correction_skipped_for_memory);
  CHECK(report.correction_message == "uncorrected: no calibration was found for the machine of this run");
}

TEST_CASE("a run directory that cannot be read feeds no sink and says why", "[run_sink]") {
  std::vector<std::string> log;
  NotingSink chrome("chrome", false, log), csv("csv", true, log);
  RunSink* const sinks[] = {&chrome, &csv};
  const std::string missing = "/nonexistent/rlscope-run";
  const absl::StatusOr<FedRun> fed = FeedRunDirectory(missing, "", sinks);
  REQUIRE_FALSE(fed.ok());
  CHECK(std::string(fed.status().message()).find(missing) != std::string::npos);
  CHECK(log.empty());
  CHECK_FALSE(LoadRunReport(missing).ok());
}
