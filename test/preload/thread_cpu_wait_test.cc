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
bool g_readable = true;
bool FakeSchedstat(uint32_t, int64_t* ran_ns, int64_t* waited_ns) {
  *ran_ns = g_ran_ns;
  *waited_ns = g_waited_ns;
  return g_readable;
}
constexpr int64_t kMs = 1'000'000;

}  // namespace

TEST_CASE("schedstat's run and wait times are parsed, anything else refused", "[thread_cpu_wait]") {
  int64_t ran = 0, waited = 0;
  REQUIRE(ParseSchedstat("123456789 98765 42\n", &ran, &waited));
  CHECK(ran == 123456789);
  CHECK(waited == 98765);
  CHECK_FALSE(ParseSchedstat("", &ran, &waited));
  CHECK_FALSE(ParseSchedstat("12", &ran, &waited));
  CHECK_FALSE(ParseSchedstat("-1 5 1", &ran, &waited));
  CHECK_FALSE(ParseSchedstat("abc def", &ran, &waited));
}

TEST_CASE("this thread's schedstat reads, and its run time grows as it computes", "[thread_cpu_wait]") {
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  int64_t ran = 0, waited = 0;
  REQUIRE(ThreadSchedstat(tid, &ran, &waited));
  const int64_t before = ran;
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  volatile uint64_t sink = 0;
  do {
    for (int i = 0; i < 100000; ++i) sink = sink + i;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1'000'000'000 + (now.tv_nsec - start.tv_nsec) < 20 * kMs);
  REQUIRE(ThreadSchedstat(tid, &ran, &waited));
  CHECK(ran > before);
  CHECK(waited >= 0);
  CHECK_FALSE(ThreadSchedstat(1u << 30, &ran, &waited));  // No such thread.
}

TEST_CASE("a span is sent from the second reading on, once per interval", "[thread_cpu_wait]") {
  g_ran_ns = 50 * kMs, g_waited_ns = 10 * kMs, g_readable = true;
  CpuWaitReading last;
  CpuWaitSpan span;
  // The first reading of a thread only starts its count.
  CHECK_FALSE(NextCpuWaitSample(last, 7, 1, 1000 * kMs, false, &FakeSchedstat, &span));
  // Too soon: not read.
  g_ran_ns += 30 * kMs, g_waited_ns += 60 * kMs;
  CHECK_FALSE(NextCpuWaitSample(last, 7, 1, 1100 * kMs, false, &FakeSchedstat, &span));
  // Due: the span since the first reading.
  REQUIRE(NextCpuWaitSample(last, 7, 1, 1200 * kMs, false, &FakeSchedstat, &span));
  CHECK(span.begin_ns == 1000 * kMs);
  CHECK(span.end_ns == 1200 * kMs);
  CHECK(span.ran_ns == 30 * kMs);
  CHECK(span.waited_ns == 60 * kMs);
  // Forced (the final flush): at once.
  g_ran_ns += 5 * kMs;
  REQUIRE(NextCpuWaitSample(last, 7, 1, 1250 * kMs, true, &FakeSchedstat, &span));
  CHECK(span.begin_ns == 1200 * kMs);
  CHECK(span.ran_ns == 5 * kMs);
  CHECK(span.waited_ns == 0);
}

TEST_CASE("a new thread instance, an unreadable thread or counters gone back send nothing", "[thread_cpu_wait]") {
  g_ran_ns = 50 * kMs, g_waited_ns = 10 * kMs, g_readable = true;
  CpuWaitReading last;
  CpuWaitSpan span;
  CHECK_FALSE(NextCpuWaitSample(last, 7, 1, 1000 * kMs, false, &FakeSchedstat, &span));
  // The tid reused by another thread: its counters start afresh.
  g_ran_ns = 1 * kMs, g_waited_ns = 0;
  CHECK_FALSE(NextCpuWaitSample(last, 7, 2, 1300 * kMs, false, &FakeSchedstat, &span));
  g_ran_ns = 0;  // Went back: not a span.
  CHECK_FALSE(NextCpuWaitSample(last, 7, 2, 1600 * kMs, false, &FakeSchedstat, &span));
  g_readable = false;
  g_ran_ns = 9 * kMs;
  CHECK_FALSE(NextCpuWaitSample(last, 7, 2, 1900 * kMs, false, &FakeSchedstat, &span));
  // Readable again: measured from the last reading it got.
  g_readable = true;
  REQUIRE(NextCpuWaitSample(last, 7, 2, 2200 * kMs, false, &FakeSchedstat, &span));
  CHECK(span.begin_ns == 1600 * kMs);
  CHECK(span.ran_ns == 9 * kMs);
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
