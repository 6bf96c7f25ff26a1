#include "report/capture_windows.h"

#include <catch2/catch.hpp>

using namespace rlscope::report;

namespace {
Interval Edge(int64_t time, bool open) { return {time, time, open ? 1 : 0}; }

ProcessTimeline Process(int64_t begin, int64_t end, IntervalList edges) {
  ProcessTimeline process;
  process.begin_ns = begin;
  process.end_ns = end;
  process.capture_edges = std::move(edges);
  return process;
}
}  // namespace

TEST_CASE("capture windows: from the edges, open at the start unless closed there", "[capture]") {
  CHECK_FALSE(CaptureWindowsOf(Process(0, 100, {})).has_value());  // No edges: all captured.
  // Closed at the start (the Hello), opened at 20, closed at 50, opened at 70 till the end.
  const auto windows =
      CaptureWindowsOf(Process(0, 100, {Edge(0, false), Edge(20, true), Edge(50, false), Edge(70, true)}));
  REQUIRE(windows.has_value());
  CHECK(*windows == IntervalList{{20, 50, 0}, {70, 100, 0}});
  // Open at the start, closed at 30; an edge repeating the state changes nothing.
  CHECK(*CaptureWindowsOf(Process(10, 100, {Edge(30, false), Edge(40, false)})) == IntervalList{{10, 30, 0}});
  // Never opened: no window.
  CHECK(CaptureWindowsOf(Process(0, 100, {Edge(0, false)}))->empty());
  // Edges out of order (streams of an exec chain) are taken in time order.
  CHECK(*CaptureWindowsOf(Process(0, 100, {Edge(60, false), Edge(0, false), Edge(40, true)})) ==
        IntervalList{{40, 60, 0}});
}

TEST_CASE("capture windows: a thread keeps its time, instances and GPU work inside them", "[capture]") {
  ProcessTimeline process = Process(0, 100, {Edge(0, false), Edge(20, true), Edge(60, false)});
  ThreadTimeline thread;
  thread.begin_ns = 10;
  thread.end_ns = 90;
  AddInstance(thread, 7, 15);  // Before the window.
  AddInstance(thread, 7, 25);
  AddInstance(thread, 7, 55);
  AddInstance(thread, 8, 70);  // After it.
  process.threads.push_back(thread);
  GpuActivity inside, outside;
  inside.begin_ns = 30;
  outside.begin_ns = 65;
  process.gpu_activities = {inside, outside};
  ApplyCaptureWindows(process);
  const ThreadTimeline& kept = process.threads[0];
  REQUIRE(kept.captured.has_value());
  CHECK(*kept.captured == IntervalList{{20, 60, 0}});
  CHECK(kept.operation_instances == std::map<int32_t, uint64_t>{{7, 2}});
  CHECK(kept.instance_starts.size() == 4);  // All kept: an instance begun before a window owns its time there.
  CHECK(process.whole_run_instances == std::map<int32_t, uint64_t>{{7, 3}, {8, 1}});
  REQUIRE(process.gpu_activities.size() == 1);
  CHECK(process.gpu_activities[0].begin_ns == 30);
  REQUIRE(process.captured.has_value());
  CHECK(*process.captured == IntervalList{{20, 60, 0}});
}

TEST_CASE("Intersect keeps the parts inside and their labels", "[capture]") {
  CHECK(Intersect({{0, 10, 1}, {10, 30, 2}, {40, 50, 3}}, {{5, 15, 0}, {25, 45, 0}}) ==
        IntervalList{{5, 10, 1}, {10, 15, 2}, {25, 30, 2}, {40, 45, 3}});
  CHECK(Intersect({{0, 10, 1}}, {}).empty());
}
