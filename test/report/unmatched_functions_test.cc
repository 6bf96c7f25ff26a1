#include "report/unmatched_functions.h"

#include <catch2/catch.hpp>

#include "report/run_report.h"

using namespace rlscope::report;

namespace {

LineRow Line(std::string operation, std::string location, std::string file, int64_t outer_ns, uint64_t calls,
             bool user_code = true) {
  LineRow row;
  row.operation = std::move(operation);
  row.location = std::move(location);
  row.file = std::move(file);
  row.ns = outer_ns * 2;  // Inclusive time may count nested calls twice: never used here.
  row.outer_ns = outer_ns;
  row.calls = calls;
  row.user_code = user_code;
  return row;
}

}  // namespace

TEST_CASE("Time in no operation is explained by the functions it was spent under", "[unmatched]") {
  ProcessReport process;
  process.traced_thread_ns = 1000;
  ThreadReport thread;
  thread.rows = {{1, "(none)", Resource::kCpu, Category::kBackend, 500},
                 {1, "(none)", Resource::kCpu, Category::kPython, 100},
                 {1, "(none)", Resource::kCpu, Category::kWait, 900},  // Blocked: not work.
                 {1, "simulation", Resource::kCpu, Category::kPython, 400}};
  process.threads = {thread};
  process.python_lines = {
      Line("(none)", "Trainer.collect (/home/u/proj/train.py:40)", "train.py", 300, 10),
      Line("(none)", "Trainer.collect (/home/u/proj/train.py:40)", "train.py", 50, 5),  // Another line of it.
      Line("(none)", "<module> (/home/u/proj/train.py:1)", "train.py", 200, 3),
      Line("(none)", "odd[name]*.f (lib.py:3)", "lib.py", 20, 1, false),
      Line("simulation", "Env.step (/home/u/proj/env.py:9)", "env.py", 400, 4),
  };
  const UnmatchedTime unmatched = ExplainUnmatched(process);
  CHECK(unmatched.none_ns == 600);
  CHECK(unmatched.thread_ns == 1000);
  REQUIRE(unmatched.functions.size() == 3);
  const UnmatchedFunction& first = unmatched.functions[0];
  CHECK(first.function == "Trainer.collect");
  CHECK(first.file == "train.py");
  CHECK(first.ns == 350);
  CHECK(first.calls == 15);
  CHECK(first.user_code);
  CHECK(first.rule == "operation OPERATION  Trainer.collect  file=*/train.py|train.py");
  // Top-level code: a rule would name the whole script.
  CHECK(unmatched.functions[1].function == "<module>");
  CHECK(unmatched.functions[1].rule.empty());
  // Glob characters in a name match only themselves.
  CHECK(unmatched.functions[2].rule == "operation OPERATION  odd[[]name][*].f  file=*/lib.py|lib.py");
  CHECK(!unmatched.functions[2].user_code);
  CHECK(ExplainUnmatched(process, 1).functions.size() == 1);
}

TEST_CASE("A process with no time in no operation has nothing to explain", "[unmatched]") {
  ProcessReport process;
  process.traced_thread_ns = 10;
  ThreadReport thread;
  thread.rows = {{1, "inference", Resource::kCpu, Category::kPython, 10}};
  process.threads = {thread};
  process.python_lines = {Line("inference", "act (a.py:1)", "a.py", 10, 1)};
  const UnmatchedTime unmatched = ExplainUnmatched(process);
  CHECK(unmatched.none_ns == 0);
  CHECK(unmatched.functions.empty());
}

TEST_CASE("A rule names a function with or without its file", "[unmatched]") {
  CHECK(RuleFor("collect", "") == "operation OPERATION  collect");
  CHECK(RuleFor("run", "<string>") == "operation OPERATION  run");  // exec'd code has no file to name.
  CHECK(RuleFor("Agent.act", "agent.py") == "operation OPERATION  Agent.act  file=*/agent.py|agent.py");
  CHECK(RuleFor("step", "/a b/my env.py") == "operation OPERATION  step");  // A rule cannot hold the space.
  CHECK(RuleFor("step", "/a/x|y.py") == "operation OPERATION  step");
  CHECK(RuleFor("<module>", "train.py").empty());
  CHECK(RuleFor("", "train.py").empty());
}
