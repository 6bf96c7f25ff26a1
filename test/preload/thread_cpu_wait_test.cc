#include "preload/thread_cpu_wait.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>

#include "format/wire_format.h"

using namespace rlscope::preload;

namespace {

// A thread as a test sets it.
int64_t g_ran_ns = 0;
int64_t g_waited_ns = 0;
int64_t g_runs = 0;
bool g_readable = true;
int64_t g_now_ns = 0;
int g_reads = 0;
bool FakeSchedstat(uint32_t, Schedstat* stat) {
  ++g_reads;
  *stat = {g_ran_ns, g_waited_ns, g_runs};
  return g_readable;
}
int64_t FakeNow() { return g_now_ns; }
constexpr int64_t kMs = 1'000'000;

// Reads at wall_ms.
bool At(CpuWaitReading& last, int64_t wall_ms, CpuWaitSpan* span, uint64_t instance = 1, bool force = false) {
  g_now_ns = wall_ms * kMs;
  return NextCpuWaitSample(last, 7, instance, &FakeNow, force, &FakeSchedstat, span);
}

}  // namespace

TEST_CASE("schedstat's run and wait times and run count are parsed, anything else refused", "[thread_cpu_wait]") {
  Schedstat stat;
  REQUIRE(ParseSchedstat("123456789 98765 42\n", &stat));
  CHECK(stat.ran_ns == 123456789);
  CHECK(stat.waited_ns == 98765);
  CHECK(stat.runs == 42);
  REQUIRE(ParseSchedstat("5 6", &stat));  // No run count: 0.
  CHECK(stat.runs == 0);
  CHECK_FALSE(ParseSchedstat("", &stat));
  CHECK_FALSE(ParseSchedstat("12", &stat));
  CHECK_FALSE(ParseSchedstat("-1 5 1", &stat));
  CHECK_FALSE(ParseSchedstat("abc def", &stat));
}

TEST_CASE("this thread's schedstat reads, and its run time grows as it computes", "[thread_cpu_wait]") {
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  Schedstat stat;
  REQUIRE(ThreadSchedstat(tid, &stat));
  const Schedstat before = stat;
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  volatile uint64_t sink = 0;
  do {
    for (int i = 0; i < 100000; ++i) sink = sink + i;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1'000'000'000 + (now.tv_nsec - start.tv_nsec) < 20 * kMs);
  REQUIRE(ThreadSchedstat(tid, &stat));
  CHECK(stat.ran_ns > before.ran_ns);
  CHECK(stat.waited_ns >= before.waited_ns);
  CHECK(stat.runs >= before.runs);
  CHECK_FALSE(ThreadSchedstat(1u << 30, &stat));  // No such thread.
}

TEST_CASE("a span is sent from the second reading on, once per interval", "[thread_cpu_wait]") {
  g_ran_ns = 50 * kMs, g_waited_ns = 10 * kMs, g_runs = 100, g_readable = true;
  CpuWaitReading last;
  CpuWaitSpan span;
  // The first reading of a thread only starts its count.
  CHECK_FALSE(At(last, 1000, &span));
  // Too soon: not read.
  g_ran_ns += 30 * kMs, g_waited_ns += 60 * kMs, g_runs += 20;
  CHECK_FALSE(At(last, 1100, &span));
  // Due: the span since the first reading.
  REQUIRE(At(last, 1200, &span));
  CHECK(span.begin_ns == 1000 * kMs);
  CHECK(span.end_ns == 1200 * kMs);
  CHECK(span.stat.ran_ns == 30 * kMs);
  CHECK(span.stat.waited_ns == 60 * kMs);
  CHECK(span.stat.runs == 20);
  // Forced (the final flush): at once.
  g_ran_ns += 5 * kMs;
  REQUIRE(At(last, 1250, &span, 1, true));
  CHECK(span.begin_ns == 1200 * kMs);
  CHECK(span.stat.ran_ns == 5 * kMs);
  CHECK(span.stat.waited_ns == 0);
}

TEST_CASE("a new thread instance, an unreadable thread or counters gone back send nothing", "[thread_cpu_wait]") {
  g_ran_ns = 50 * kMs, g_waited_ns = 10 * kMs, g_runs = 5, g_readable = true;
  CpuWaitReading last;
  CpuWaitSpan span;
  CHECK_FALSE(At(last, 1000, &span));
  // The tid reused by another thread: its counters start afresh.
  g_ran_ns = 1 * kMs, g_waited_ns = 0, g_runs = 1;
  CHECK_FALSE(At(last, 1300, &span, 2));
  g_ran_ns = 0;  // Went back: not a span.
  CHECK_FALSE(At(last, 1600, &span, 2));
  // Unreadable: tried when due, not at every flush, and no span after it.
  g_readable = false, g_reads = 0;
  g_ran_ns = 9 * kMs;
  CHECK_FALSE(At(last, 1900, &span, 2));
  CHECK_FALSE(At(last, 1920, &span, 2));
  CHECK(g_reads == 1);
  g_readable = true;
  CHECK_FALSE(At(last, 2200, &span, 2));
  g_ran_ns += 4 * kMs;
  REQUIRE(At(last, 2500, &span, 2));
  CHECK(span.begin_ns == 2200 * kMs);
  CHECK(span.stat.ran_ns == 4 * kMs);
}

TEST_CASE("the wire payload keeps both times to the microsecond", "[thread_cpu_wait]") {
  using namespace rlscope;
  const uint64_t payload = wire::CpuWaitPayload(123'456'789, 2'500);
  CHECK(wire::CpuWaitRanNs(payload) == 123'457'000);
  CHECK(wire::CpuWaitWaitedNs(payload) == 3'000);
  // Clamped, never wrapped into the other field.
  const uint64_t huge = wire::CpuWaitPayload(int64_t{1} << 62, -5);
  CHECK(wire::CpuWaitRanNs(huge) == int64_t{0xffffffff} * 1000);
  CHECK(wire::CpuWaitWaitedNs(huge) == 0);
}
