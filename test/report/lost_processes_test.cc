#include "report/lost_processes.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "format/trace_reader.h"
#include "preload/batch_encoder.h"
#include "report/timeline_builder.h"

using namespace rlscope::report;
namespace wire = rlscope::wire;

namespace {

ProcessTimeline Process(int pid, std::vector<ChildStart> children = {}) {
  ProcessTimeline process;
  process.pid = pid;
  process.argv = {"trainer", "--env", "hopper"};
  process.children = std::move(children);
  return process;
}

}  // namespace

TEST_CASE("A child that streamed is not a problem", "[lost_processes]") {
  const std::vector<ProcessTimeline> processes = {Process(10, {{11, ChildStartKind::kForked, "", 5}}), Process(11)};
  CHECK(LostChildProblems(processes).empty());
}

TEST_CASE("A child that sent nothing is named with its parent", "[lost_processes]") {
  const std::vector<ProcessTimeline> processes = {
      Process(10, {{11, ChildStartKind::kForked, "", 5}, {12, ChildStartKind::kSpawned, "/bin/worker", 6}})};
  const std::vector<std::string> problems = LostChildProblems(processes);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].find("process 11 (forked by process 10, trainer --env hopper) sent nothing") == 0);
  CHECK(problems[1].find("process 12 (spawned to run /bin/worker by process 10") == 0);
  CHECK(problems[1].find("not in the report") != std::string::npos);
}

TEST_CASE("Many children lost the same way share one line", "[lost_processes]") {
  std::vector<ChildStart> children;
  for (int pid = 100; pid < 110; ++pid) children.push_back({pid, ChildStartKind::kSpawned, "/usr/bin/ptxas", pid});
  children.push_back({200, ChildStartKind::kForked, "", 300});
  const std::vector<std::string> problems = LostChildProblems({Process(10, children)});
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].find("10 processes (spawned to run /usr/bin/ptxas by process 10, trainer --env hopper) sent "
                         "nothing, so they are not in the report (process 100, process 101, process 102 and 7 "
                         "more)") == 0);
  CHECK(problems[1].find("process 200 (forked by process 10") == 0);
}

TEST_CASE("A vfork child whose exec failed is not expected", "[lost_processes]") {
  // subprocess searching PATH: two failed attempts, then one that worked.
  const std::vector<ProcessTimeline> processes = {Process(10, {{20, ChildStartKind::kExecuted, "/usr/local/bin/x", 1},
                                                               {20, ChildStartKind::kExecFailed, "", 2},
                                                               {21, ChildStartKind::kExecuted, "/bin/x", 3},
                                                               {21, ChildStartKind::kExecFailed, "", 4},
                                                               {21, ChildStartKind::kExecuted, "/usr/bin/x", 5}})};
  const std::vector<std::string> problems = LostChildProblems(processes);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("process 21 (started (vfork + exec) to run /usr/bin/x by process 10") == 0);
}

TEST_CASE("The timeline keeps the children a stream recorded, with their programs", "[lost_processes]") {
  rlscope::preload::BatchEncoder encoder;
  encoder.BeginBatch(1, 100);
  const wire::Event events[] = {
      wire::Event(10, 10, 0, static_cast<uint16_t>(wire::EventKind::kChildProcess),
                  static_cast<uint16_t>(wire::ChildStart::kForked), 4321),
      wire::Event(20, 20, 7, static_cast<uint16_t>(wire::EventKind::kChildProcess),
                  static_cast<uint16_t>(wire::ChildStart::kSpawned), 4322),
  };
  encoder.AddThreadEvents(1, 1, 2, 0, {}, [&](wire::Event* out) {
    out[0] = events[0];
    out[1] = events[1];
  });
  encoder.AddString(7, "/bin/worker");  // After the event that uses it.
  rlscope::preload::BatchEncoder::Frame frame = encoder.FinishBatch();
  std::vector<uint8_t> bytes(frame.begin(), frame.end());
  auto verified = rlscope::collector::VerifyFrame(bytes.data(), bytes.size());
  REQUIRE(verified.ok());
  NameTable names;
  TimelineBuilder builder(names);
  builder.AddFrame(**verified);
  const ProcessTimeline process = builder.Finish();
  REQUIRE(process.children.size() == 2);
  CHECK(process.children[0].pid == 4321);
  CHECK(process.children[0].how == ChildStartKind::kForked);
  CHECK(process.children[0].program.empty());
  CHECK(process.children[1].pid == 4322);
  CHECK(process.children[1].how == ChildStartKind::kSpawned);
  CHECK(process.children[1].program == "/bin/worker");
}
