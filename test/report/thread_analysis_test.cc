#include "report/thread_analysis.h"

#include <catch2/catch.hpp>

#include "test/report/timeline_fixtures.h"

using namespace rlscope::report;
using rlscope::report::fixtures::Thread;

namespace {

constexpr int32_t kNone = 0;
constexpr int32_t kInference = 1;
constexpr int32_t kBackprop = 2;
constexpr int32_t kOptimizer = 3;
constexpr int32_t kSimulation = 4;
constexpr int32_t kExplicit = 5;
constexpr int32_t kCuda = static_cast<int32_t>(Category::kCudaApi);
constexpr int32_t kBackend = static_cast<int32_t>(Category::kBackend);
constexpr int32_t kSim = static_cast<int32_t>(Category::kSimulator);
constexpr int32_t kPy = static_cast<int32_t>(Category::kPython);

int64_t At(const Breakdown& breakdown, int32_t operation, Category category) {
  const auto it = breakdown.find({operation, Resource::kCpu, category});
  return it == breakdown.end() ? 0 : it->second;
}

int64_t Total(const Breakdown& breakdown) {
  int64_t total = 0;
  for (const auto& [key, ns] : breakdown) total += ns;
  return total;
}

}  // namespace

TEST_CASE("A thread's lifetime is partitioned by operation and category", "[analysis]") {
  ThreadTimeline thread = Thread(0, 100);
  // inference [10,30) with a CUDA call [12,20); backprop [40,90) containing
  // optimizer [60,80) with a CUDA call [65,70); a CUDA call outside [92,95).
  thread.operations = {{10, 30, kInference}, {40, 90, kBackprop}, {60, 80, kOptimizer}};
  thread.cpu_events = {{12, 20, kCuda}, {65, 70, kCuda}, {92, 95, kCuda}};
  const Breakdown breakdown = AnalyseThread(thread, kNone).breakdown;
  CHECK(At(breakdown, kInference, Category::kCudaApi) == 8);
  CHECK(At(breakdown, kInference, Category::kNative) == 12);
  CHECK(At(breakdown, kBackprop, Category::kNative) == 30);  // Outer keeps only what the inner left.
  CHECK(At(breakdown, kOptimizer, Category::kCudaApi) == 5);
  CHECK(At(breakdown, kOptimizer, Category::kNative) == 15);
  CHECK(At(breakdown, kNone, Category::kCudaApi) == 3);
  CHECK(At(breakdown, kNone, Category::kNative) == 10 + 10 + 2 + 5);
  CHECK(Total(breakdown) == 100);  // Nothing dropped, nothing counted twice.
}

TEST_CASE("Events outside the thread's lifetime are clipped", "[analysis]") {
  ThreadTimeline thread = Thread(50, 60);
  thread.python = true;
  thread.operations = {{0, 100, kInference}};
  thread.cpu_events = {{40, 55, kCuda}};
  const Breakdown breakdown = AnalyseThread(thread, kNone).breakdown;
  CHECK(At(breakdown, kInference, Category::kCudaApi) == 5);
  CHECK(At(breakdown, kInference, Category::kPython) == 5);
  CHECK(Total(breakdown) == 10);
}

TEST_CASE("An empty lifetime has an empty breakdown", "[analysis]") {
  CHECK(AnalyseThread(Thread(10, 10), kNone).breakdown.empty());
}

TEST_CASE("A Python thread's uncovered time is Python; levels nest innermost-wins", "[analysis]") {
  ThreadTimeline thread = Thread(0, 100);
  thread.python = true;
  // A backend call [10,50) with a CUDA call [20,30) inside and a Python
  // callback [35,45) inside it; a simulator call [60,80).
  thread.cpu_events = {{10, 50, kBackend}, {20, 30, kCuda}, {35, 45, kPy}, {60, 80, kSim}};
  const ThreadAnalysis analysis = AnalyseThread(thread, kNone);
  CHECK(At(analysis.breakdown, kNone, Category::kBackend) == 20);
  CHECK(At(analysis.breakdown, kNone, Category::kCudaApi) == 10);
  CHECK(At(analysis.breakdown, kNone, Category::kSimulator) == 20);
  CHECK(At(analysis.breakdown, kNone, Category::kPython) == 50);  // 10 + 10 (callback) + 10 + 20.
  CHECK(analysis.transitions.at({kNone, Category::kPython, Category::kBackend}) == 1);
  CHECK(analysis.transitions.at({kNone, Category::kBackend, Category::kCudaApi}) == 1);
  CHECK(analysis.transitions.at({kNone, Category::kBackend, Category::kPython}) == 1);
  CHECK(analysis.transitions.at({kNone, Category::kPython, Category::kSimulator}) == 1);
  CHECK(analysis.transitions.size() == 4);
}

TEST_CASE("Explicit operations take precedence over inferred ones", "[analysis]") {
  ThreadTimeline thread = Thread(0, 100);
  thread.python = true;
  thread.inferred_operations = {{0, 60, kSimulation}, {70, 90, kInference}};
  thread.operations = {{20, 40, kExplicit}};
  // An inferred operation nested inside the explicit one stays hidden.
  thread.inferred_operations.push_back({25, 35, kBackprop});
  const ThreadAnalysis analysis = AnalyseThread(thread, kNone);
  CHECK(At(analysis.breakdown, kSimulation, Category::kPython) == 40);
  CHECK(At(analysis.breakdown, kExplicit, Category::kPython) == 20);
  CHECK(At(analysis.breakdown, kBackprop, Category::kPython) == 0);
  CHECK(At(analysis.breakdown, kInference, Category::kPython) == 20);
  CHECK(At(analysis.breakdown, kNone, Category::kPython) == 20);
}

TEST_CASE("Transitions are counted per operation and native time per Python line", "[analysis]") {
  ThreadTimeline thread = Thread(0, 100);
  thread.python = true;
  thread.inferred_operations = {{0, 50, kInference}, {50, 100, kBackprop}};
  thread.cpu_events = {{10, 20, kBackend}, {30, 40, kBackend}, {60, 70, kBackend}, {62, 64, kCuda}};
  thread.native_calls = {
      {10, 20, Category::kBackend, 7, 42}, {30, 40, Category::kBackend, 7, 42}, {60, 70, Category::kBackend, 8, 13}};
  const ThreadAnalysis analysis = AnalyseThread(thread, kNone);
  CHECK(analysis.transitions.at({kInference, Category::kPython, Category::kBackend}) == 2);
  CHECK(analysis.transitions.at({kBackprop, Category::kPython, Category::kBackend}) == 1);
  CHECK(analysis.transitions.at({kBackprop, Category::kBackend, Category::kCudaApi}) == 1);
  const LineCost& line = analysis.lines.at({kInference, 7, 42});
  CHECK(line.ns == 20);
  CHECK(line.calls == 2);
  CHECK(analysis.lines.at({kBackprop, 8, 13}).ns == 10);
}

TEST_CASE("A line's outer time counts a callback's native calls once", "[analysis]") {
  ThreadTimeline thread = Thread(0, 100);
  thread.python = true;
  // Line 7:42 calls into native code [10,60) that calls back into Python,
  // which makes two native calls of its own (line 8:3), recorded first as
  // they return first; then a call [70,80) on its own.
  thread.native_calls = {{20, 30, Category::kBackend, 8, 3},
                         {40, 50, Category::kBackend, 8, 3},
                         {10, 60, Category::kBackend, 7, 42},
                         {70, 80, Category::kBackend, 8, 3}};
  const ThreadAnalysis analysis = AnalyseThread(thread, kNone);
  const LineCost& outer = analysis.lines.at({kNone, 7, 42});
  CHECK(outer.ns == 50);
  CHECK(outer.outer_ns == 50);
  const LineCost& inner = analysis.lines.at({kNone, 8, 3});
  CHECK(inner.ns == 30);        // Inclusive: both nested calls and the last one.
  CHECK(inner.outer_ns == 10);  // Only the call inside no other.
  CHECK(analysis.library_lines.at({kNone, 8, 3}).outer_ns == 10);
}

TEST_CASE("A thread without operations of its own takes the main thread's", "[analysis]") {
  ThreadTimeline main_thread = Thread(0, 100);
  main_thread.python = true;
  main_thread.inferred_operations = {{0, 50, kInference}, {50, 100, kBackprop}};
  ThreadTimeline worker = Thread(0, 100);  // An autograd-like worker: CUDA calls only.
  worker.cpu_events = {{60, 70, kCuda}, {10, 20, kCuda}};
  ThreadTimeline idle = Thread(0, 100);
  const IntervalList inherited = InheritedOperations({idle, main_thread, worker});
  REQUIRE(inherited.size() == 2);
  const ThreadAnalysis analysis = AnalyseThread(worker, kNone, &inherited);
  CHECK(At(analysis.breakdown, kBackprop, Category::kCudaApi) == 10);
  CHECK(At(analysis.breakdown, kInference, Category::kCudaApi) == 10);
  CHECK(analysis.instances.empty());  // The main thread counts them.
  // Its waiting is not work: only its time inside recorded calls counts.
  CHECK(analysis.active_time_only);
  CHECK(Total(analysis.breakdown) == 20);
  // A Python thread keeps its own (empty) timeline: its idle time is not
  // the main thread's work.
  ThreadTimeline python_thread = Thread(0, 100);
  python_thread.python = true;
  CHECK(At(AnalyseThread(python_thread, kNone, &inherited).breakdown, kNone, Category::kPython) == 100);
  // A thread with its own operations keeps them.
  ThreadTimeline own = worker;
  own.inferred_operations = {{0, 100, kSimulation}};
  CHECK(At(AnalyseThread(own, kNone, &inherited).breakdown, kSimulation, Category::kCudaApi) == 20);
}
