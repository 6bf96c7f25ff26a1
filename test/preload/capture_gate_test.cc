#include "preload/capture_gate.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <utility>
#include <vector>

#include "preload/string_table.h"
#include "preload/tick_clock.h"

using rlscope::preload::CaptureGate;
using rlscope::preload::CaptureOpen;
using rlscope::preload::NoteCaptureRangeEnd;
using rlscope::preload::NoteCaptureRangePush;
using rlscope::preload::NoteCaptureRangeStart;
using rlscope::wire::CaptureEdge;
using rlscope::wire::CaptureReason;

namespace {

// InitWith: the gate as a process started with only `name`=`value` of
// the RLSCOPE_CAPTURE_* variables would have it.
void InitWith(const char* name, const char* value) {
  for (const char* variable :
       {"RLSCOPE_CAPTURE_OPEN_NS", "RLSCOPE_CAPTURE_CLOSE_NS", "RLSCOPE_CAPTURE_API", "RLSCOPE_CAPTURE_PROFILER_API",
        "RLSCOPE_CAPTURE_RANGE", "RLSCOPE_CAPTURE_OP", "RLSCOPE_CAPTURE_SKIP", "RLSCOPE_CAPTURE_COUNT",
        "RLSCOPE_CAPTURE_EVERY", "RLSCOPE_CAPTURE_SIGNAL"}) {
    unsetenv(variable);
  }
  if (name != nullptr) setenv(name, value, 1);
  REQUIRE(rlscope::preload::StringTable::Init());  // Names are interned.
  CaptureGate::Init();
}

// Edges: (time, open) of the edges since the last call, all of `reason`.
std::vector<std::pair<int64_t, bool>> Edges(CaptureReason reason) {
  std::vector<CaptureEdge> edges;
  CaptureGate::TakeEdges(edges);
  std::vector<std::pair<int64_t, bool>> out;
  for (const CaptureEdge& edge : edges) {
    CHECK(edge.reason() == static_cast<uint8_t>(reason));
    out.emplace_back(edge.time_ns(), edge.open() != 0);
  }
  return out;
}

using EdgeList = std::vector<std::pair<int64_t, bool>>;

// LeaveOpen: the gate as a run without windows has it, whatever a test
// left (a failed REQUIRE included): later tests of this binary record.
struct LeaveOpen {
  ~LeaveOpen() { InitWith(nullptr, nullptr); }
};

}  // namespace

TEST_CASE("Without a window capture is open from the start", "[capture]") {
  LeaveOpen leave_open;
  InitWith(nullptr, nullptr);
  CHECK(CaptureOpen());
  CHECK_FALSE(CaptureGate::ClosedAtStart());
  CaptureGate::OnProfilerApi(false);  // Not a profiler-API run: nothing to close.
  CHECK(CaptureOpen());
}

TEST_CASE("A closed capture says since when; opening calls the listener", "[capture]") {
  LeaveOpen leave_open;
  static int opened = 0;
  opened = 0;
  CaptureGate::SetOpenListener([] { ++opened; });
  const int64_t before = rlscope::preload::MonotonicNs();
  InitWith("RLSCOPE_CAPTURE_PROFILER_API", "1");
  CHECK(CaptureGate::ClosedSinceNs() >= before);
  CaptureGate::OnProfilerApi(true);
  CaptureGate::OnProfilerApi(true);  // Already open: no second call.
  CHECK(opened == 1);
  const int64_t closing = rlscope::preload::MonotonicNs();
  CaptureGate::OnProfilerApi(false);
  CHECK(CaptureGate::ClosedSinceNs() >= closing);
  CaptureGate::SetOpenListener(nullptr);
}

TEST_CASE("NVTX capture ranges hold capture open while any is open", "[capture]") {
  LeaveOpen leave_open;
  InitWith("RLSCOPE_CAPTURE_RANGE", "window_under_test");
  CHECK_FALSE(CaptureOpen());
  CHECK(CaptureGate::ClosedAtStart());
  NoteCaptureRangePush(true, 10);
  NoteCaptureRangePush(true, 11);   // Nested: no edge.
  NoteCaptureRangePush(false, 12);  // The inner pop keeps it open.
  CHECK(CaptureOpen());
  NoteCaptureRangePush(false, 13);
  CHECK_FALSE(CaptureOpen());
  NoteCaptureRangePush(false, 14);  // More pops than pushes: stays closed, no edge.
  CHECK(Edges(CaptureReason::kNvtxRange) == EdgeList{{10, true}, {13, false}});

  // Start/end ranges by id, alongside a push range on another thread.
  NoteCaptureRangeStart(7, 20);
  NoteCaptureRangeEnd(8, 21);  // Not a capture range's id: nothing.
  NoteCaptureRangePush(true, 22);
  NoteCaptureRangeEnd(7, 23);  // The push still holds it open.
  CHECK(CaptureOpen());
  NoteCaptureRangePush(false, 24);
  CHECK_FALSE(CaptureOpen());
  NoteCaptureRangeEnd(7, 25);  // Ended already.
  CHECK(Edges(CaptureReason::kNvtxRange) == EdgeList{{20, true}, {24, false}});
  // The profiler API does not control a range window.
  CaptureGate::OnProfilerApi(true);
  CHECK_FALSE(CaptureOpen());
}

TEST_CASE("A fork child keeps start/end capture ranges and counts its pushes again", "[capture]") {
  LeaveOpen leave_open;
  InitWith("RLSCOPE_CAPTURE_RANGE", "window_under_test");
  NoteCaptureRangePush(true, 1);
  CaptureGate::ResetAfterFork();  // The pushing thread was not the forking one.
  CHECK_FALSE(CaptureOpen());
  CHECK(CaptureGate::ClosedAtStart());
  CHECK(Edges(CaptureReason::kNvtxRange).empty());  // The parent's to send.
  NoteCaptureRangePush(true, 2);                    // Reopened by the forking thread.
  NoteCaptureRangePush(false, 3);
  CHECK(Edges(CaptureReason::kNvtxRange) == EdgeList{{2, true}, {3, false}});

  NoteCaptureRangeStart(9, 4);
  CaptureGate::ResetAfterFork();
  CHECK(CaptureOpen());
  CHECK_FALSE(CaptureGate::ClosedAtStart());
  NoteCaptureRangeEnd(9, 5);  // The child may end it: the window closes there.
  CHECK(Edges(CaptureReason::kNvtxRange) == EdgeList{{5, false}});
}

TEST_CASE("cudaProfilerStart and Stop open and close capture", "[capture]") {
  LeaveOpen leave_open;
  InitWith("RLSCOPE_CAPTURE_PROFILER_API", "1");
  CHECK(CaptureGate::ProfilerApiControlled());
  CHECK(CaptureGate::ClosedAtStart());
  CHECK_FALSE(CaptureOpen());
  NoteCaptureRangePush(true, 1);  // Without a range name ranges open nothing.
  NoteCaptureRangeStart(3, 2);
  CHECK_FALSE(CaptureOpen());
  CaptureGate::OnProfilerApi(true);
  CHECK(CaptureOpen());
  CaptureGate::OnProfilerApi(true);  // A second start changes nothing.
  CaptureGate::OnProfilerApi(false);
  CHECK_FALSE(CaptureOpen());
  CaptureGate::OnProfilerApi(true);
  CHECK(Edges(CaptureReason::kProfilerApi).size() == 3);
  CaptureGate::OnProfilerApi(false);
  CHECK_FALSE(CaptureOpen());
}

TEST_CASE("An instance window's fork child counts from zero and says how it began", "[capture]") {
  LeaveOpen leave_open;
  InitWith("RLSCOPE_CAPTURE_OP", "simulation");
  setenv("RLSCOPE_CAPTURE_SKIP", "2", 1);
  CaptureGate::Init();
  CHECK(CaptureGate::ClosedAtStart());
  rlscope::preload::CountCaptureInstance(1);
  rlscope::preload::CountCaptureInstance(2);
  rlscope::preload::CountCaptureInstance(3);  // The third opens.
  CHECK(CaptureOpen());
  CHECK(Edges(CaptureReason::kInstances) == EdgeList{{3, true}});
  CaptureGate::ResetAfterFork();
  CHECK_FALSE(CaptureOpen());
  CHECK(CaptureGate::ClosedAtStart());
}

TEST_CASE("A repeated instance window opens every P instances for M, to the end", "[capture]") {
  LeaveOpen leave_open;
  InitWith("RLSCOPE_CAPTURE_OP", "simulation");
  setenv("RLSCOPE_CAPTURE_SKIP", "1", 1);
  setenv("RLSCOPE_CAPTURE_COUNT", "2", 1);
  setenv("RLSCOPE_CAPTURE_EVERY", "5", 1);
  CaptureGate::Init();
  CHECK_FALSE(CaptureOpen());
  // Instances 1..17: skip 1, then windows of 2 at 2-3, 7-8, 12-13, 17-.
  std::vector<int> open_at;
  for (int instance = 1; instance <= 17; ++instance) {
    rlscope::preload::CountCaptureInstance(static_cast<uint64_t>(instance));
    if (CaptureOpen()) open_at.push_back(instance);
  }
  CHECK(open_at == std::vector<int>{2, 3, 7, 8, 12, 13, 17});
  CHECK(Edges(CaptureReason::kInstances) ==
        EdgeList{{2, true}, {4, false}, {7, true}, {9, false}, {12, true}, {14, false}, {17, true}});
}

TEST_CASE("A period not longer than the window is ignored: one window", "[capture]") {
  LeaveOpen leave_open;
  InitWith("RLSCOPE_CAPTURE_OP", "simulation");
  setenv("RLSCOPE_CAPTURE_COUNT", "3", 1);
  setenv("RLSCOPE_CAPTURE_EVERY", "3", 1);
  CaptureGate::Init();
  std::vector<int> open_at;
  for (int instance = 1; instance <= 8; ++instance) {
    rlscope::preload::CountCaptureInstance(static_cast<uint64_t>(instance));
    if (CaptureOpen()) open_at.push_back(instance);
  }
  CHECK(open_at == std::vector<int>{1, 2, 3});
}
