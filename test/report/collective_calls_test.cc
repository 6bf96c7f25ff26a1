#include "report/collective_calls.h"

#include <catch2/catch.hpp>
#include <vector>

#include "report/hooked_communication.h"

using namespace rlscope::report;

namespace {

constexpr int32_t kNone = 0, kBackprop = 1, kInference = 2;
constexpr int32_t kTrain = 10, kTorch = 11;  // Code locations.

NativeCall Call(int64_t begin, int64_t end, Category category, uint32_t user_line, int32_t location = kTorch) {
  NativeCall call;
  call.begin_ns = begin;
  call.end_ns = end;
  call.category = category;
  call.location = location;
  call.line = 7;
  call.user_location = kTrain;
  call.user_line = user_line;
  return call;
}

}  // namespace

TEST_CASE("One line's calls are one collective until another line calls", "[collectives]") {
  const IntervalList operations = {{0, 500, kBackprop}, {500, 1000, kInference}};
  // Line 40 all-reduces two parameters (a builtin between, same line), line
  // 41 scales a gradient, line 40 again: two collectives; line 50 in
  // inference a third. A Backend call from another line holds none.
  const std::vector<NativeCall> calls = {
      Call(10, 20, Category::kCommunication, 40),  Call(21, 22, Category::kNative, 40),
      Call(25, 60, Category::kCommunication, 40),  Call(70, 80, Category::kBackend, 41),
      Call(90, 120, Category::kCommunication, 40), Call(200, 210, Category::kBackend, 45),
      Call(600, 650, Category::kCommunication, 50)};
  const std::vector<CollectiveCall> collectives = CollectiveCallsOf(calls, {}, operations, kNone);
  REQUIRE(collectives.size() == 3);
  CHECK((collectives[0].begin_ns == 10 && collectives[0].end_ns == 60 && collectives[0].operation == kBackprop));
  CHECK((collectives[1].begin_ns == 90 && collectives[1].end_ns == 120 && collectives[1].operation == kBackprop));
  CHECK((collectives[2].begin_ns == 600 && collectives[2].end_ns == 650 && collectives[2].operation == kInference));
}

TEST_CASE("Calls nested in other native calls are no collectives; record order does not matter", "[collectives]") {
  // Recorded as they return: the inner call before the outer one. The
  // communication inside a backward pass (a comm hook) is not counted; the
  // outer Communication call holds its own nested call once.
  const std::vector<NativeCall> calls = {Call(15, 18, Category::kCommunication, 30),
                                         Call(10, 40, Category::kBackend, 30), Call(55, 58, Category::kBackend, 31),
                                         Call(50, 70, Category::kCommunication, 31),
                                         Call(80, 90, Category::kCommunication, 32)};
  const std::vector<CollectiveCall> collectives = CollectiveCallsOf(calls, {}, {}, kNone);
  REQUIRE(collectives.size() == 2);
  CHECK((collectives[0].begin_ns == 50 && collectives[0].end_ns == 70 && collectives[0].operation == kNone));
  CHECK((collectives[1].begin_ns == 80 && collectives[1].end_ns == 90));
}

TEST_CASE("No Communication call, no collectives", "[collectives]") {
  CHECK(CollectiveCallsOf({Call(0, 10, Category::kBackend, 1)}, {}, {}, kNone).empty());
  CHECK(CollectiveCallsOf({}, {}, {}, kNone).empty());
}

TEST_CASE("Hooked communication calls outside Python's are collectives of their own", "[collectives]") {
  const IntervalList operations = {{0, 1000, kBackprop}};
  // A Python-level all_reduce (10-60) with a hooked call inside it (20-50,
  // NCCL on the calling thread), and two hooked calls inside backward's
  // Backend call (DDP's buckets, 300-320 and 330-360, recorded out of
  // order).
  const std::vector<NativeCall> calls = {Call(10, 60, Category::kCommunication, 40),
                                         Call(200, 400, Category::kBackend, 41)};
  const std::vector<HookedCollective> hooked = {{20, 50, 7, true}, {330, 360, 7, true}, {300, 320, 7, true}};
  const std::vector<CollectiveCall> native = NativeCollectivesOf(hooked, calls, operations, kNone);
  REQUIRE(native.size() == 2);
  CHECK((native[0].begin_ns == 300 && native[0].end_ns == 320 && native[0].native && native[0].queued));
  CHECK((native[1].begin_ns == 330 && native[1].end_ns == 360 && native[1].operation == kBackprop));
  // The Python-level one is queued too: NCCL's call inside it returned
  // once queued.
  const std::vector<CollectiveCall> python_level = CollectiveCallsOf(calls, hooked, operations, kNone);
  REQUIRE(python_level.size() == 1);
  CHECK((python_level[0].begin_ns == 10 && !python_level[0].native && python_level[0].queued));
  CHECK_FALSE(CollectiveCallsOf(calls, {{330, 360, 7, true}}, operations, kNone)[0].queued);
}

TEST_CASE("A Python-level collective the correction shrank to nothing still holds its hooked call", "[collectives]") {
  // The correction removed all of a fast dist.barrier's time (150-150): the
  // hooked call made at that time (150-150 too, on the same thread) is
  // its own, not a collective of its own.
  const std::vector<NativeCall> calls = {Call(150, 150, Category::kCommunication, 40)};
  const std::vector<HookedCollective> hooked = {{150, 150, 7, false}, {400, 450, 7, false}};
  const std::vector<CollectiveCall> native = NativeCollectivesOf(hooked, calls, {{0, 1000, kBackprop}}, kNone);
  REQUIRE(native.size() == 1);
  CHECK(native[0].begin_ns == 400);
}

TEST_CASE("A process keeps the Python-level collective, not the transfer another thread ran for it", "[collectives]") {
  // Thread A's dist.all_reduce (100-200) waits for gloo's worker thread,
  // whose hooked collective (120-190) serves it; a later hooked collective
  // of the worker (DDP, 300-350) and one that began before the Python call
  // (50-110) stand.
  std::vector<CollectiveCall> calls = {{300, 350, kBackprop, true},
                                       {120, 190, kBackprop, true},
                                       {100, 200, kBackprop, false},
                                       {50, 110, kBackprop, true}};
  const std::vector<CollectiveCall> kept = WithoutServedCollectives(calls);
  REQUIRE(kept.size() == 3);
  CHECK((kept[0].begin_ns == 50 && kept[0].native));
  CHECK((kept[1].begin_ns == 100 && !kept[1].native));
  CHECK((kept[2].begin_ns == 300 && kept[2].native));
}

TEST_CASE("A transfer that began with its Python-level collective is served, whichever thread came first",
          "[collectives]") {
  // The worker's hooked call begins at the Python call's own begin (both
  // 100; the corrected clock can make them equal), and the worker's thread
  // comes first in the process's list; an empty Python-level call (500)
  // serves one that began at its time.
  const std::vector<CollectiveCall> kept = WithoutServedCollectives({{100, 180, kBackprop, true},
                                                                     {500, 500, kBackprop, true},
                                                                     {100, 200, kBackprop, false},
                                                                     {500, 500, kBackprop, false}});
  REQUIRE(kept.size() == 2);
  CHECK((kept[0].begin_ns == 100 && !kept[0].native));
  CHECK((kept[1].begin_ns == 500 && !kept[1].native));
}

TEST_CASE("Hooked communication functions: collectives, queued ones, and the rest", "[collectives]") {
  using Kind = HookedCommunicationKind;
  CHECK(KindOfHookedCommunication("_ZN4gloo9allreduceERKNS_16AllreduceOptionsE") == Kind::kCollective);
  CHECK(KindOfHookedCommunication("MPI_Allreduce") == Kind::kCollective);
  CHECK(KindOfHookedCommunication("MPI_Barrier") == Kind::kCollective);
  CHECK(KindOfHookedCommunication("ncclCommInitRank") == Kind::kCollective);  // The ranks meet there.
  CHECK(KindOfHookedCommunication("rpc_call_sync") == Kind::kCollective);     // A --comm function of the user's.
  for (const char* queued : {"ncclAllReduce", "ncclBroadcast", "ncclReduceScatter", "ncclGroupEnd"}) {
    CHECK(KindOfHookedCommunication(queued) == Kind::kQueuedCollective);
  }
  for (const char* other : {"ncclSend", "ncclRecv", "MPI_Wait", "MPI_Waitall", "MPI_Testany", "MPI_Isend"}) {
    CHECK(KindOfHookedCommunication(other) == Kind::kNotCollective);
  }
}
