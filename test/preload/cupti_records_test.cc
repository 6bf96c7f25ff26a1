#include "preload/cupti_records.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

using rlscope::preload::ConvertActivity;
namespace wire = rlscope::wire;

namespace {

std::vector<std::string> g_interned;
uint32_t FakeIntern(const char* name) {
  g_interned.emplace_back(name);
  return static_cast<uint32_t>(g_interned.size());
}

template <typename Record>
Record Zeroed(CUpti_ActivityKind kind) {
  Record record;
  memset(&record, 0, sizeof(record));
  record.kind = kind;
  return record;
}

wire::GpuActivity Convert(const void* record, int64_t offset_ns = 0) {
  wire::GpuActivity out;
  REQUIRE(ConvertActivity(*static_cast<const CUpti_Activity*>(record), &FakeIntern, offset_ns, &out));
  return out;
}

}  // namespace

TEST_CASE("A kernel record keeps its times, correlation id, stream, device and name", "[cupti]") {
  g_interned.clear();
  auto kernel = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.start = 1000;
  kernel.end = 1500;
  kernel.correlationId = 42;
  kernel.streamId = 7;
  kernel.deviceId = 1;
  kernel.name = "_Z4gemmPfS_";
  const wire::GpuActivity activity = Convert(&kernel, 100);
  CHECK(activity.begin_ns() == 1100);  // The clock offset is applied.
  CHECK(activity.end_ns() == 1600);
  CHECK(activity.correlation_id() == 42);
  CHECK(activity.stream_id() == 7);
  CHECK(activity.device_id() == 1);
  CHECK(activity.kind() == static_cast<uint8_t>(wire::GpuActivityKind::kKernel));
  REQUIRE(g_interned.size() == 1);
  CHECK(g_interned[0] == "_Z4gemmPfS_");
  CHECK(activity.name_id() == 1);
}

TEST_CASE("A copy takes its runtime call's correlation id when it has one", "[cupti]") {
  auto copy = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  copy.start = 10;
  copy.end = 20;
  copy.bytes = 4096;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  copy.correlationId = 5;  // The driver call's.
  copy.runtimeCorrelationId = 4;
  wire::GpuActivity activity = Convert(&copy);
  CHECK(activity.correlation_id() == 4);
  CHECK(activity.bytes() == 4096);
  CHECK(activity.detail() == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  CHECK(activity.kind() == static_cast<uint8_t>(wire::GpuActivityKind::kMemcpy));
  copy.runtimeCorrelationId = 0;  // A copy the driver API made directly (JAX).
  CHECK(Convert(&copy).correlation_id() == 5);
}

TEST_CASE("Memsets, peer copies and CUPTI's overhead records are kept", "[cupti]") {
  auto set = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  set.start = 1;
  set.end = 3;
  set.bytes = 64;
  set.correlationId = 9;
  CHECK(Convert(&set).kind() == static_cast<uint8_t>(wire::GpuActivityKind::kMemset));
  CHECK(Convert(&set).correlation_id() == 9);

  auto peer = Zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  peer.start = 5;
  peer.end = 8;
  peer.bytes = 128;
  peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  CHECK(Convert(&peer).kind() == static_cast<uint8_t>(wire::GpuActivityKind::kMemcpy));
  CHECK(Convert(&peer).bytes() == 128);

  auto overhead = Zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  overhead.start = 100;
  overhead.end = 250;
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  overhead.objectId.pt.threadId = 4321;
  const wire::GpuActivity activity = Convert(&overhead);
  CHECK(activity.kind() == static_cast<uint8_t>(wire::GpuActivityKind::kCuptiOverhead));
  CHECK(activity.bytes() == 4321);  // The thread it delayed.
  CHECK(activity.detail() == wire::EncodeOverheadKind(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH));
  CHECK(activity.end_ns() - activity.begin_ns() == 150);
}

TEST_CASE("Records of other kinds are skipped; an unfinished end becomes an instant", "[cupti]") {
  CUpti_Activity other{};
  other.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  wire::GpuActivity out;
  CHECK_FALSE(ConvertActivity(other, &FakeIntern, 0, &out));

  auto kernel = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.start = 1000;
  kernel.end = 0;  // CUPTI leaves 0 when a forced flush caught it unfinished.
  const wire::GpuActivity activity = Convert(&kernel);
  CHECK(activity.end_ns() == activity.begin_ns());
}
