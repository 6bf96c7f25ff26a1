#include "preload/thread_idle.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>

using namespace rlscope::preload;

namespace {

// A thread's clocks as a test sets them: ran, and waited for a CPU.
int64_t g_cpu_ns = 0;
int64_t g_waited_ns = 0;
int g_busy_reads = 0;
int64_t FakeCpu(uint32_t) { return g_cpu_ns; }
int64_t FakeBusy(uint32_t) {
  ++g_busy_reads;
  return g_cpu_ns + g_waited_ns;
}
constexpr IdleReader kFake{&FakeCpu, &FakeBusy};
constexpr int64_t kMs = 1'000'000;

struct Sampler {
  IdleSample last;
  int64_t begin = 0, end = 0;
  bool At(int64_t wall_ns, uint64_t instance = 1) {
    return NextIdleSample(last, 7, instance, wall_ns, kFake, &begin, &end);
  }
};

}  // namespace

TEST_CASE("schedstat's ran and waited fields sum to the busy time", "[thread_idle]") {
  int64_t busy = 0;
  REQUIRE(ParseSchedstatBusyNs("123456 7890 42\n", &busy));
  CHECK(busy == 123456 + 7890);
  CHECK_FALSE(ParseSchedstatBusyNs("", &busy));
  CHECK_FALSE(ParseSchedstatBusyNs("12", &busy));
  CHECK_FALSE(ParseSchedstatBusyNs("-5 3 1", &busy));
}

TEST_CASE("A blocked stretch that begins at a reading is sent from its second span on", "[thread_idle]") {
  g_cpu_ns = 0, g_waited_ns = 0, g_busy_reads = 0;
  Sampler s;
  CHECK_FALSE(s.At(0));  // The first reading: nothing to compare with.
  g_cpu_ns = 19 * kMs;   // Busy.
  CHECK_FALSE(s.At(20 * kMs));
  CHECK(g_busy_reads == 1);     // At the first reading only: never after a busy span.
  g_cpu_ns += kMs / 2;          // Blocked from here: under a twentieth of each span.
  CHECK_FALSE(s.At(40 * kMs));  // Its start's run delay was not read: not sent.
  g_cpu_ns += kMs / 2;
  REQUIRE(s.At(60 * kMs));
  CHECK(s.begin == 40 * kMs);
  CHECK(s.end == 60 * kMs);
  REQUIRE(s.At(80 * kMs));
  CHECK(s.begin == 60 * kMs);
  g_cpu_ns += 5 * kMs;  // Works again.
  CHECK_FALSE(s.At(100 * kMs));
}

TEST_CASE("A blocked stretch that begins within a span is sent from the next span on", "[thread_idle]") {
  g_cpu_ns = 0, g_waited_ns = 0, g_busy_reads = 0;
  Sampler s;
  s.At(0);
  g_cpu_ns = 19 * kMs;  // Busy.
  CHECK_FALSE(s.At(20 * kMs));
  g_cpu_ns += 8 * kMs;  // Ran 8 ms of these 20, then blocked: its run delay is read.
  CHECK_FALSE(s.At(40 * kMs));
  CHECK(g_busy_reads == 2);  // The first reading and this span.
  g_cpu_ns += kMs / 2;
  REQUIRE(s.At(60 * kMs));  // The stretch's first whole span.
  CHECK(s.begin == 40 * kMs);
  CHECK(s.end == 60 * kMs);
  g_cpu_ns += 11 * kMs;  // Ran more than half: not read.
  CHECK_FALSE(s.At(80 * kMs));
  CHECK(g_busy_reads == 3);  // The first reading, the half-idle span, the idle one.
}

TEST_CASE("A thread that waited for a CPU was not blocked", "[thread_idle]") {
  g_cpu_ns = 0, g_waited_ns = 0;
  Sampler s;
  s.At(0);
  s.At(20 * kMs);           // Idle by its CPU clock, run delay read.
  g_waited_ns += 18 * kMs;  // Runnable all along on a busy machine.
  CHECK_FALSE(s.At(40 * kMs));
}

TEST_CASE("Spans shorter than the minimum, or of another instance, are not sent", "[thread_idle]") {
  g_cpu_ns = 0, g_waited_ns = 0;
  Sampler s;
  s.At(0);
  s.At(20 * kMs);
  CHECK_FALSE(s.At(20 * kMs + kMinIdleSpanNs - 1));
  Sampler reused;  // A buffer taken over by a new thread starts afresh.
  reused.At(0, 1);
  reused.At(20 * kMs, 1);
  CHECK_FALSE(reused.At(40 * kMs, 2));
  // The new thread's first reading read its run delay: its first span,
  // idle, is sent.
  REQUIRE(reused.At(60 * kMs, 2));
  CHECK(reused.begin == 40 * kMs);
}

TEST_CASE("This thread's own clocks can be read, and no thread's cannot", "[thread_idle]") {
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  const int64_t before = ThreadCpuNs(tid);
  REQUIRE(before >= 0);
  volatile double x = 0;
  for (int i = 0; i < 1'000'000; ++i) x = x + i;
  CHECK(ThreadCpuNs(tid) > before);
  CHECK(ThreadBusyNs(tid) >= 0);
  // No thread has this id (above any pid_max). (A thread just joined is
  // no test: its task lingers a moment after join returns, seen readable
  // on a busy machine.)
  constexpr uint32_t kNoSuchTid = 1u << 29;
  CHECK(ThreadCpuNs(kNoSuchTid) == -1);
  CHECK(ThreadBusyNs(kNoSuchTid) == -1);
}
