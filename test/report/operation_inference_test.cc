// How recorded rule matches become the operations a report shows
// (operation_inference.h), on hand-made threads.
#include "report/operation_inference.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "test/report/timeline_fixtures.h"

namespace rlscope::report {
namespace {

struct Span {
  int64_t begin;
  int64_t end;
  std::string operation;
  friend bool operator==(const Span&, const Span&) = default;
};

std::ostream& operator<<(std::ostream& out, const Span& span) {
  return out << "[" << span.begin << "," << span.end << ") " << span.operation;
}

struct Resolved {
  std::vector<Span> spans;
  std::map<std::string, uint64_t> instances;
};

// SpansOf: the thread's resolved operations, by name.
std::vector<Span> SpansOf(const ThreadTimeline& thread, const NameTable& names) {
  std::vector<Span> spans;
  for (const Interval& interval : thread.inferred_operations) {
    spans.push_back({interval.begin_ns, interval.end_ns, names.Name(interval.label)});
  }
  return spans;
}

// Resolve: one thread over [0, end) with `inferred` (possibly nested) and
// `explicit_operations`, resolved; names instead of labels.
Resolved Resolve(const std::vector<Span>& inferred, int64_t end, const std::vector<Span>& explicit_operations = {},
                 const std::string& executable = "/usr/bin/python3", std::vector<NativeCall> native_calls = {}) {
  NameTable names;
  ProcessTimeline process;
  process.executable = executable;
  ThreadTimeline thread = fixtures::Thread(0, end);
  thread.native_calls = std::move(native_calls);
  for (const Span& span : inferred)
    thread.inferred_operations.push_back({span.begin, span.end, names.Intern(span.operation)});
  for (const Span& span : explicit_operations) {
    thread.operations.push_back({span.begin, span.end, names.Intern(span.operation)});
  }
  process.threads.push_back(std::move(thread));
  ResolveInferredOperations(process, names);
  Resolved resolved;
  resolved.spans = SpansOf(process.threads[0], names);
  for (const auto& [label, count] : process.threads[0].operation_instances)
    resolved.instances[names.Name(label)] = count;
  return resolved;
}

TEST_CASE("A forward pass is backprop before its segment's last backward, inference after", "[operation_inference]") {
  // DQN's training step: target and online forward passes, backward,
  // optimizer step; then the next step's acting forward; then env.step.
  const Resolved resolved = Resolve({{10, 20, "simulation"},
                                     {30, 40, "forward"},
                                     {45, 50, "forward"},
                                     {55, 60, "backprop"},
                                     {61, 65, "backprop"},
                                     {70, 75, "forward"},
                                     {80, 90, "simulation"},
                                     {92, 95, "forward"},
                                     {96, 98, "simulation"}},
                                    100);
  CHECK(resolved.spans == std::vector<Span>{{0, 10, "startup"},
                                            // After an env step: its outputs converted.
                                            {10, 30, "simulation"},
                                            // A training step's tail, until the next operation.
                                            {30, 70, "backprop"},
                                            // Code around acting is acting (the action
                                            // turned into what env.step takes).
                                            {70, 80, "inference"},
                                            {80, 92, "simulation"},
                                            {92, 96, "inference"},
                                            {96, 98, "simulation"},
                                            {98, 100, "teardown"}});
  // One training step, two acting forward passes, three env steps.
  CHECK(resolved.instances == std::map<std::string, uint64_t>{{"backprop", 1}, {"inference", 2}, {"simulation", 3}});
}

TEST_CASE("Forward passes are resolved by nesting before order", "[operation_inference]") {
  SECTION("a forward pass that contains a backward is a training step") {
    // A user's nn.Module method Agent.learn: forward, backward, then a
    // target-network update in the same method.
    const Resolved resolved = Resolve({{10, 50, "forward"}, {15, 20, "forward"}, {25, 30, "backprop"}}, 50);
    CHECK(resolved.spans == std::vector<Span>{{0, 10, "startup"}, {10, 50, "backprop"}});
  }
  SECTION("a forward pass inside a training step is the step's") {
    const Resolved resolved = Resolve({{10, 40, "backprop"}, {15, 20, "forward"}, {50, 60, "forward"}}, 60);
    CHECK(resolved.spans == std::vector<Span>{{0, 10, "startup"}, {10, 50, "backprop"}, {50, 60, "inference"}});
  }
}

TEST_CASE("Without a backward, every forward pass is acting", "[operation_inference]") {
  const Resolved resolved = Resolve({{10, 20, "forward"}, {30, 40, "simulation"}, {50, 60, "forward"}}, 60);
  CHECK(resolved.spans ==
        std::vector<Span>{{0, 10, "startup"}, {10, 30, "inference"}, {30, 50, "simulation"}, {50, 60, "inference"}});
}

TEST_CASE("Glue is decided on inferred operations alone", "[operation_inference]") {
  // An explicit operation around env.step changes nothing inferred: the
  // glue around the step is decided as without the annotation.
  const Resolved resolved =
      Resolve({{10, 20, "forward"}, {35, 38, "simulation"}, {50, 60, "forward"}}, 60, {{30, 40, "custom_step"}});
  CHECK(resolved.spans ==
        std::vector<Span>{{0, 10, "startup"}, {10, 35, "inference"}, {35, 50, "simulation"}, {50, 60, "inference"}});
}

TEST_CASE("A thread without inferred operations is left alone", "[operation_inference]") {
  const Resolved resolved = Resolve({}, 100);
  CHECK(resolved.spans.empty());
  CHECK(resolved.instances.empty());
}

TEST_CASE("A compiler helper process is compile from start to end", "[operation_inference]") {
  const Resolved resolved = Resolve({{10, 20, "simulation"}}, 100, {}, "/usr/local/cuda/bin/ptxas");
  CHECK(resolved.spans == std::vector<Span>{{0, 100, "compile"}});
  CHECK(IsCompilerHelper("ptxas"));
  CHECK_FALSE(IsCompilerHelper("/usr/bin/python3"));
  CHECK_FALSE(IsCompilerHelper("/opt/ptxas-tools/bin/python"));
}

}  // namespace
}  // namespace rlscope::report

namespace rlscope::report {
namespace {

TEST_CASE("Simulator code outside every operation is simulation", "[operation_inference]") {
  NameTable names;
  ProcessTimeline process;
  ThreadTimeline thread = fixtures::Thread(0, 100);
  thread.python = true;
  thread.inferred_operations.push_back({40, 50, names.Intern(kForwardCandidate)});
  // A hooked mj_step before the forward pass, and one inside it (a rule's
  // operation stays: the simulator call does not override it).
  thread.cpu_events.push_back({10, 20, static_cast<int32_t>(Category::kSimulator)});
  thread.cpu_events.push_back({42, 44, static_cast<int32_t>(Category::kSimulator)});
  thread.native_calls.push_back({60, 70, Category::kSimulator, 0, 0});
  process.threads.push_back(std::move(thread));
  ResolveInferredOperations(process, names);
  const std::vector<Span> spans = SpansOf(process.threads[0], names);
  CHECK(spans == std::vector<Span>{{0, 10, "startup"},
                                   {10, 40, "simulation"},
                                   {40, 60, "inference"},
                                   {60, 70, "simulation"},
                                   {70, 100, "teardown"}});
}

}  // namespace
}  // namespace rlscope::report

namespace rlscope::report {
namespace {

// A native call made from line `line` of the user's train.py (label 7).
NativeCall CallFrom(int64_t begin, int64_t end, uint32_t line) {
  NativeCall call;
  call.begin_ns = begin;
  call.end_ns = end;
  call.location = call.user_location = 7;
  call.line = call.user_line = line;
  return call;
}

TEST_CASE("Acting's own statement after a training or env step is acting from its first native call",
          "[operation_inference]") {
  // optimizer.step(), then the target network's update (line 120, three
  // calls), random.random() (line 80), then `q_network(torch.Tensor(obs).
  // to(device))` (line 84: two calls converting the argument, then the
  // forward pass), then env.step.
  const std::vector<NativeCall> calls = {CallFrom(22, 24, 120), CallFrom(25, 27, 120), CallFrom(28, 30, 120),
                                         CallFrom(33, 34, 80),  CallFrom(36, 37, 84),  CallFrom(38, 39, 84),
                                         CallFrom(41, 44, 84),  // Inside the forward pass: its own.
                                         CallFrom(55, 56, 90)};
  const Resolved resolved =
      Resolve({{10, 20, "backprop"}, {40, 50, "forward"}, {60, 70, "simulation"}}, 80, {}, "/usr/bin/python3", calls);
  CHECK(resolved.spans == std::vector<Span>{{0, 10, "startup"},
                                            // The training step's tail: the target update and the
                                            // lines before the acting statement.
                                            {10, 36, "backprop"},
                                            {36, 60, "inference"},
                                            {60, 70, "simulation"},
                                            {70, 80, "teardown"}});

  SECTION("after an env step too: its outputs converted, then the acting statement") {
    const Resolved stepped = Resolve({{10, 20, "simulation"}, {40, 50, "forward"}}, 50, {}, "/usr/bin/python3",
                                     {CallFrom(22, 24, 70), CallFrom(30, 32, 84), CallFrom(33, 35, 84)});
    CHECK(stepped.spans == std::vector<Span>{{0, 10, "startup"}, {10, 30, "simulation"}, {30, 50, "inference"}});
  }
  SECTION("not before other operations: the glue before an env step stays the training step's") {
    const Resolved before_step =
        Resolve({{10, 20, "backprop"}, {40, 50, "simulation"}}, 50, {}, "/usr/bin/python3", {CallFrom(30, 32, 84)});
    CHECK(before_step.spans == std::vector<Span>{{0, 10, "startup"}, {10, 40, "backprop"}, {40, 50, "simulation"}});
  }
  SECTION("without native calls in between, the tail stays the training step's") {
    const Resolved bare = Resolve({{10, 20, "backprop"}, {40, 50, "forward"}}, 50);
    CHECK(bare.spans == std::vector<Span>{{0, 10, "startup"}, {10, 40, "backprop"}, {40, 50, "inference"}});
  }
  SECTION("a call that runs on into the operation (its callback) is not an argument") {
    const Resolved callback = Resolve({{10, 20, "backprop"}, {40, 50, "forward"}}, 50, {}, "/usr/bin/python3",
                                      {CallFrom(25, 26, 84), CallFrom(30, 50, 84)});
    CHECK(callback.spans == std::vector<Span>{{0, 10, "startup"}, {10, 25, "backprop"}, {25, 50, "inference"}});
  }
}

TEST_CASE("An inline off-policy loop samples its batch in the statements before each training step",
          "[operation_inference]") {
  // `for step: env.step; store; if learning: idx = np.random.randint(..);
  // b_obs = torch.as_tensor(obs_store[idx]); ...; train`: each env step is
  // followed by a training step. Line 84 converts the step's outputs; lines
  // 95-99 (one code object, consecutive statements) assemble the batch.
  std::vector<Span> loop;
  std::vector<NativeCall> calls;
  for (int64_t base = 10; base < 100; base += 30) {
    loop.push_back({base, base + 2, "simulation"});
    loop.push_back({base + 10, base + 20, "backprop"});
    for (const NativeCall& call : {CallFrom(base + 2, base + 3, 84), CallFrom(base + 4, base + 5, 95),
                                   CallFrom(base + 6, base + 7, 96), CallFrom(base + 8, base + 9, 99)}) {
      calls.push_back(call);
    }
  }
  const Resolved resolved = Resolve(loop, 110, {}, "/usr/bin/python3", calls);
  std::vector<Span> expected = {{0, 10, "startup"}};
  for (int64_t base = 10; base < 100; base += 30) {
    expected.push_back({base, base + 4, "simulation"});   // The step and its outputs converted.
    expected.push_back({base + 4, base + 10, "replay"});  // From the batch's first call on.
    expected.push_back({base + 10, base == 70 ? base + 20 : base + 30, "backprop"});  // Its tail, to the next step.
  }
  expected.push_back({90, 110, "teardown"});
  CHECK(resolved.spans == expected);
  CHECK(resolved.instances == std::map<std::string, uint64_t>{{"simulation", 3}, {"replay", 3}, {"backprop", 3}});

  SECTION("an annotation's own calls do not split the run (sys.monitoring records them)") {
    NameTable names;
    const int32_t train_py = names.Intern("<module> (/work/train.py:1)");
    const int32_t rlscope_exit = names.Intern("operation.__exit__ (/opt/share/rlscope/python/rlscope/__init__.py:110)");
    ProcessTimeline process;
    process.executable = "/usr/bin/python3";
    ThreadTimeline thread = fixtures::Thread(0, 110);
    for (const Span& span : loop)
      thread.inferred_operations.push_back({span.begin, span.end, names.Intern(span.operation)});
    thread.native_calls = calls;
    for (NativeCall& call : thread.native_calls) call.location = call.user_location = train_py;
    for (int64_t base = 10; base < 100; base += 30) {
      NativeCall exit = CallFrom(base + 7, base + 8, 90);  // The `with` line, before the batch's.
      exit.location = rlscope_exit;
      exit.user_location = train_py;
      thread.native_calls.push_back(exit);
    }
    process.threads.push_back(std::move(thread));
    ResolveInferredOperations(process, names);
    CHECK(SpansOf(process.threads[0], names) == expected);
  }
  SECTION("a run of statements ends where a line goes back or skips more than 3 lines") {
    // Line 84 (the step's outputs), 95 and 96 (the batch), 99 (the `with`):
    // 99 - 96 = 3 is one run. Line 90 after 96 goes back, 100 after 96 skips 4.
    for (uint32_t last_line : {90u, 100u}) {
      std::vector<NativeCall> broken = calls;
      for (NativeCall& call : broken) {
        if (call.line == 99) call.line = call.user_line = last_line;
      }
      const Resolved resolved_broken = Resolve(loop, 110, {}, "/usr/bin/python3", broken);
      CHECK(resolved_broken.spans[2] == Span{18, 20, "replay"});  // The last statement only.
    }
  }
  SECTION("not in an on-policy loop, whose training follows a whole rollout") {
    // Two rollouts of 20 env steps, each followed by a training phase.
    std::vector<Span> rollouts;
    std::vector<NativeCall> rollout_calls;
    for (int64_t base : {0, 1000}) {
      for (int64_t step = 0; step < 20; ++step)
        rollouts.push_back({base + 10 * step, base + 10 * step + 2, "simulation"});
      rollouts.push_back({base + 300, base + 400, "backprop"});
      rollout_calls.push_back(CallFrom(base + 250, base + 260, 95));
    }
    const Resolved on_policy = Resolve(rollouts, 2000, {}, "/usr/bin/python3", rollout_calls);
    CHECK(on_policy.instances.count("replay") == 0);
  }
  SECTION("not where training follows an env step once only") {
    const Resolved once =
        Resolve({{10, 12, "simulation"}, {20, 30, "backprop"}}, 30, {}, "/usr/bin/python3", {CallFrom(14, 15, 95)});
    CHECK(once.spans == std::vector<Span>{{0, 10, "startup"}, {10, 20, "simulation"}, {20, 30, "backprop"}});
  }
}

}  // namespace
}  // namespace rlscope::report

namespace rlscope::report {
namespace {

TEST_CASE("A hand-written agent acts between env steps and trains between episodes", "[operation_inference]") {
  // A numpy REINFORCE loop: reset, three steps (the policy computed by hand
  // before each), then the gradient by hand before the next reset.
  const std::vector<Span> episode = {{10, 12, "env_reset"},  {20, 22, "simulation"}, {30, 32, "simulation"},
                                     {40, 42, "simulation"}, {60, 62, "env_reset"},  {70, 72, "simulation"}};
  SECTION("with no rule for acting or training") {
    const Resolved resolved = Resolve(episode, 80);
    CHECK(resolved.spans == std::vector<Span>{{0, 10, "startup"},
                                              {10, 12, "simulation"},
                                              {12, 20, "inference"},
                                              {20, 22, "simulation"},
                                              {22, 30, "inference"},
                                              {30, 32, "simulation"},
                                              {32, 40, "inference"},
                                              {40, 42, "simulation"},
                                              {42, 60, "backprop"},
                                              {60, 62, "simulation"},
                                              {62, 70, "inference"},
                                              {70, 72, "simulation"},
                                              {72, 80, "teardown"}});
    // Resets are env entries like steps; each glue acted or trained once.
    CHECK(resolved.instances == std::map<std::string, uint64_t>{{"simulation", 6}, {"inference", 4}, {"backprop", 1}});
  }
  SECTION("an evaluation loop with a policy rlscope knows keeps the glue as before") {
    // Acting through a known policy, training nowhere (an evaluation
    // script, a rollout worker): no acting by hand, and the time between
    // episodes is no training.
    std::vector<Span> acting = episode;
    acting.push_back({24, 26, "forward"});
    const Resolved resolved = Resolve(acting, 80);
    // The glue after a step is its outputs', up to the next acting.
    CHECK(resolved.spans == std::vector<Span>{{0, 10, "startup"},
                                              {10, 24, "simulation"},
                                              {24, 30, "inference"},
                                              {30, 72, "simulation"},
                                              {72, 80, "teardown"}});
  }
}

TEST_CASE("Simulator calls alone are no env steps to act between", "[operation_inference]") {
  // A MuJoCo loop whose env class no rule knows: mj_step calls (simulator
  // time) with the frame-skip's Python between them, no rule-found step.
  NameTable names;
  ProcessTimeline process;
  ThreadTimeline thread = fixtures::Thread(0, 100);
  for (int64_t call = 10; call < 90; call += 10) {
    thread.cpu_events.push_back({call, call + 4, static_cast<int32_t>(Category::kSimulator)});
  }
  process.threads.push_back(std::move(thread));
  ResolveInferredOperations(process, names);
  const std::vector<Span> spans = SpansOf(process.threads[0], names);
  CHECK(spans == std::vector<Span>{{0, 10, "startup"}, {10, 84, "simulation"}, {84, 100, "teardown"}});
}

TEST_CASE("An env worker waiting for its commands acts for no one", "[operation_inference]") {
  NameTable names;
  ProcessTimeline process;
  ThreadTimeline thread = fixtures::Thread(0, 100);
  const int32_t simulation = names.Intern("simulation");
  for (int64_t step = 10; step < 90; step += 20) thread.inferred_operations.push_back({step, step + 2, simulation});
  // Blocked in recv() for most of each glue but the last, which got its
  // command at once.
  for (int64_t wait = 13; wait < 50; wait += 20) {
    thread.cpu_events.push_back({wait, wait + 15, static_cast<int32_t>(Category::kWait)});
  }
  process.threads.push_back(std::move(thread));
  ResolveInferredOperations(process, names);
  const std::vector<Span> spans = SpansOf(process.threads[0], names);
  CHECK(spans == std::vector<Span>{{0, 10, "startup"}, {10, 72, "simulation"}, {72, 100, "teardown"}});
}

}  // namespace
}  // namespace rlscope::report

namespace rlscope::report {
namespace {

TEST_CASE("An operation's call that calls another operation is one instance of it", "[operation_inference]") {
  // Agent.update (backprop) samples the buffer (replay) and then trains;
  // then the next update, after acting and an env step. Env steps inside a
  // train() that runs the whole loop stay one instance each.
  const Resolved updates = Resolve({{10, 40, "backprop"},
                                    {12, 18, "replay"},
                                    {45, 50, "inference"},
                                    {52, 60, "simulation"},
                                    {62, 90, "backprop"},
                                    {64, 70, "replay"}},
                                   100);
  CHECK(updates.instances ==
        std::map<std::string, uint64_t>{{"backprop", 2}, {"replay", 2}, {"inference", 1}, {"simulation", 1}});
  const Resolved whole_loop =
      Resolve({{5, 95, "backprop"}, {10, 20, "simulation"}, {30, 40, "simulation"}, {50, 60, "simulation"}}, 100);
  CHECK(whole_loop.instances.at("simulation") == 3);
}

}  // namespace
}  // namespace rlscope::report

namespace rlscope::report {
namespace {

TEST_CASE("An inferred instance inside an explicit operation is not counted again", "[operation_inference]") {
  // `with rlscope.operation("simulation"): env.step(a)` twice: the explicit
  // operations (counted when decoded) hold the inferred env steps.
  NameTable names;
  ProcessTimeline process;
  process.executable = "/usr/bin/python3";
  ThreadTimeline thread = fixtures::Thread(0, 100);
  const int32_t simulation = names.Intern("simulation");
  for (int64_t begin : {10, 50}) {
    thread.operations.push_back({begin, begin + 20, simulation});
    AddInstance(thread, simulation, begin);
    thread.inferred_operations.push_back({begin + 2, begin + 18, simulation});
  }
  thread.inferred_operations.push_back({80, 90, simulation});  // One not annotated.
  process.threads.push_back(std::move(thread));
  ResolveInferredOperations(process, names);
  CHECK(process.threads[0].operation_instances.at(simulation) == 3);
  CHECK(process.threads[0].instance_starts.size() == 3);
}

}  // namespace
}  // namespace rlscope::report
