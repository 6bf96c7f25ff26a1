#include "preload/thread_idle.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <vector>

using namespace rlscope::preload;

namespace {

// A thread as a test sets it: ran, waited for a CPU (as the kernel counts
// it: when the wait ends), and runnable or not.
int64_t g_cpu_ns = 0;
int64_t g_waited_ns = 0;
int g_runnable = 0;
int g_waited_reads = 0;
int64_t FakeCpu(uint32_t) { return g_cpu_ns; }
int64_t FakeWaited(uint32_t) {
  ++g_waited_reads;
  return g_waited_ns;
}
int FakeRunnable(uint32_t) { return g_runnable; }
constexpr IdleReader kFake{&FakeCpu, &FakeWaited, &FakeRunnable};
constexpr int64_t kMs = 1'000'000;

void Reset() { g_cpu_ns = 0, g_waited_ns = 0, g_runnable = 0, g_waited_reads = 0; }

struct Sampler {
  IdleSample last;
  std::vector<BlockedSpan> sent;  // What the last reading sent.
  // Reads at wall_ms; true when it sent something.
  bool At(int64_t wall_ms, uint64_t instance = 1) {
    BlockedSpan out[2];
    const int count = NextIdleSample(last, 7, instance, wall_ms * kMs, kFake, out);
    sent.assign(out, out + count);
    return count > 0;
  }
  bool Sent(int64_t begin_ms, int64_t end_ms) const {
    return sent.size() == 1 && sent[0].begin_ns == begin_ms * kMs && sent[0].end_ns == end_ms * kMs;
  }
};

// Readings at 0, 20 and 40 ms of a thread blocked from 20 ms and in state
// `runnable` at 40 ms: [20, 40) held when it is not 0.
void BlockedFrom20(Sampler& s, int runnable) {
  Reset();
  s.At(0);
  s.At(20);
  g_runnable = runnable;
  CHECK_FALSE(s.At(40));
}

}  // namespace

TEST_CASE("schedstat's run delay and stat's state are parsed", "[thread_idle]") {
  int64_t waited = 0;
  REQUIRE(ParseSchedstatWaitedNs("123456 7890 42\n", &waited));
  CHECK(waited == 7890);
  CHECK_FALSE(ParseSchedstatWaitedNs("", &waited));
  CHECK_FALSE(ParseSchedstatWaitedNs("12", &waited));
  CHECK_FALSE(ParseSchedstatWaitedNs("-5 3 1", &waited));
  bool runnable = false;
  REQUIRE(ParseStatRunnable("42 (python3) R 1 42 42 0 -1", &runnable));
  CHECK(runnable);
  // A name may hold ") R (": the state follows the last ')'.
  REQUIRE(ParseStatRunnable("42 (a) R (b) S 1 42", &runnable));
  CHECK_FALSE(runnable);
  CHECK_FALSE(ParseStatRunnable("42 (python3", &runnable));
  CHECK_FALSE(ParseStatRunnable("42 (python3)", &runnable));
}

TEST_CASE("A blocked stretch that begins at a reading is sent from its second span on", "[thread_idle]") {
  Reset();
  Sampler s;
  CHECK_FALSE(s.At(0));  // The first reading: nothing to compare with.
  g_cpu_ns = 19 * kMs;   // Busy.
  CHECK_FALSE(s.At(20));
  CHECK(g_waited_reads == 1);  // At the first reading only: never after a busy span.
  g_cpu_ns += kMs / 2;         // Blocked from here: under a twentieth of each span.
  CHECK_FALSE(s.At(40));       // Its start's run delay was not read: not sent.
  g_cpu_ns += kMs / 2;
  REQUIRE(s.At(60));
  REQUIRE(s.sent.size() == 1);  // The span less its CPU time, half a ms.
  CHECK(s.sent[0].begin_ns == 40 * kMs);
  CHECK(s.sent[0].end_ns == 60 * kMs - kMs / 2);
  REQUIRE(s.At(80));  // Blocked all along: the CPU time was zero.
  CHECK(s.Sent(60, 80));
  g_cpu_ns += 5 * kMs;  // Works again.
  CHECK_FALSE(s.At(100));
}

TEST_CASE("A blocked stretch that begins within a span is sent from the next span on", "[thread_idle]") {
  Reset();
  Sampler s;
  s.At(0);
  g_cpu_ns = 19 * kMs;  // Busy.
  CHECK_FALSE(s.At(20));
  g_cpu_ns += 8 * kMs;  // Ran 8 ms of these 20, then blocked: its run delay is read.
  CHECK_FALSE(s.At(40));
  CHECK(g_waited_reads == 2);  // The first reading and this span.
  REQUIRE(s.At(60));           // The stretch's first whole span.
  CHECK(s.Sent(40, 60));
  g_cpu_ns += 11 * kMs;  // Ran more than half: not read.
  CHECK_FALSE(s.At(80));
  CHECK(g_waited_reads == 3);  // The first reading, the half-idle span, the idle one.
}

TEST_CASE("Time spent waiting for a CPU is not blocked time", "[thread_idle]") {
  Reset();
  Sampler s;
  s.At(0);
  s.At(20);                 // Idle by its CPU clock, run delay read.
  g_cpu_ns += kMs / 2;      // Woken early, waited 16 ms for a CPU, ran, slept.
  g_waited_ns += 16 * kMs;  // The rest, 3.5 ms, blocked.
  REQUIRE(s.At(40));
  CHECK(s.sent[0].begin_ns == 20 * kMs);
  CHECK(s.sent[0].end_ns == 20 * kMs + 3 * kMs + kMs / 2);
  g_waited_ns += 19 * kMs + kMs / 2;  // All but its CPU time a wait for one: nothing blocked.
  g_cpu_ns += kMs / 2;
  CHECK_FALSE(s.At(60));
}

TEST_CASE("A thread kept off the CPUs through whole spans is not blocked", "[thread_idle]") {
  // The kernel adds the wait to the run delay only when the thread gets a
  // CPU: until then the spans look blocked, and are held.
  Reset();
  Sampler s;
  s.At(0);
  g_cpu_ns = 2 * kMs;  // Ran at the start, then waited for a CPU from 2 ms on.
  CHECK_FALSE(s.At(20));
  g_runnable = 1;
  CHECK_FALSE(s.At(40));  // Looks blocked, runnable: held.
  CHECK_FALSE(s.At(60));  // Still: the held time grows.
  CHECK(s.last.held_begin_ns == 20 * kMs);
  CHECK(s.last.held_end_ns == 60 * kMs);
  g_waited_ns += 63 * kMs;  // Got a CPU at 65 ms, after a wait from 2 ms on.
  g_cpu_ns += 15 * kMs;
  CHECK_FALSE(s.At(80));  // The wait covers the held time: nothing sent.
  CHECK(s.last.held_end_ns == s.last.held_begin_ns);
}

TEST_CASE("Held time is sent less the wait for a CPU at its end", "[thread_idle]") {
  Sampler s;
  BlockedFrom20(s, 1);      // Woken at 30 ms, waiting for a CPU at the reading: held.
  g_waited_ns += 10 * kMs;  // Got a CPU at 40 ms and ran 15 ms.
  g_cpu_ns += 15 * kMs;
  REQUIRE(s.At(60));
  CHECK(s.Sent(20, 30));

  // Not runnable at a later reading settles held time without a CPU
  // (whatever woke it had gone by).
  Sampler t;
  BlockedFrom20(t, 1);
  g_runnable = 0;
  REQUIRE(t.At(60));
  CHECK(t.Sent(20, 60));  // The held span and this one, joined.
}

TEST_CASE("A thread that gets the CPU in short slices on a busy machine is never blocked", "[thread_idle]") {
  // Runnable all along; each span it runs half a ms in slices and waits
  // for a CPU the rest, the last wait of each span going on into the next
  // (7.5 and 2.5 ms of it in turn): each span's run delay holds the end
  // of the wait before it, and looks short of the span's own time off the
  // CPU by the wait still going on at its reading.
  Reset();
  Sampler s;
  s.At(0);
  g_runnable = 1;
  int64_t going_on_ns = 0;  // The wait going on at the last reading.
  for (int span = 1; span <= 10; ++span) {
    const int64_t next_going_on_ns = span % 2 == 1 ? 7 * kMs + kMs / 2 : 2 * kMs + kMs / 2;
    g_cpu_ns += kMs / 2;
    g_waited_ns += 20 * kMs - kMs / 2 - next_going_on_ns + going_on_ns;
    going_on_ns = next_going_on_ns;
    CHECK_FALSE(s.At(20 * span));
  }
}

TEST_CASE("A waiter woken often on a busy machine keeps the time it slept", "[thread_idle]") {
  // A GIL waiter: sleeps, is woken every 5 ms, waits for a CPU, runs a
  // moment and sleeps again; asleep at most readings.
  Reset();
  Sampler s;
  s.At(0);
  s.At(20);
  for (int span = 2; span < 5; ++span) {
    g_cpu_ns += kMs / 10;
    g_waited_ns += 6 * kMs;
    REQUIRE(s.At(20 * span));
    CHECK(s.sent[0].end_ns - s.sent[0].begin_ns == 20 * kMs - 6 * kMs - kMs / 10);
  }
  // Caught waiting for a CPU at a reading (woken 2 ms before it): held,
  // then cut by that wait once counted. Over the two spans it slept 40 ms
  // less its waits (6 + 6 ms) and its CPU time (0.2 ms).
  g_cpu_ns += kMs / 10;
  g_waited_ns += 4 * kMs;  // This span's earlier waits.
  g_runnable = 1;
  CHECK_FALSE(s.At(100));
  g_cpu_ns += kMs / 10;
  g_waited_ns += 6 * kMs + 2 * kMs;  // The wait caught at the reading, and this span's others.
  g_runnable = 0;
  REQUIRE(s.At(120));
  int64_t blocked_ns = 0;
  for (const BlockedSpan& span : s.sent) blocked_ns += span.end_ns - span.begin_ns;
  CHECK(blocked_ns == 40 * kMs - 12 * kMs - kMs / 5);
}

TEST_CASE("Held time released with a cut and a later blocked span are sent apart", "[thread_idle]") {
  Sampler s;
  BlockedFrom20(s, 1);  // Woken at 35 ms, waiting for a CPU at the reading.
  g_cpu_ns += kMs / 2;  // Got it at 40 ms, ran half a ms, slept.
  g_waited_ns += 5 * kMs;
  g_runnable = 0;
  REQUIRE(s.At(60));
  REQUIRE(s.sent.size() == 2);
  CHECK(s.sent[0].begin_ns == 20 * kMs);
  CHECK(s.sent[0].end_ns == 35 * kMs);
  CHECK(s.sent[1].begin_ns == 40 * kMs);
  CHECK(s.sent[1].end_ns == 60 * kMs - kMs / 2);
}

TEST_CASE("A state that cannot be read holds; a run delay that cannot be read drops", "[thread_idle]") {
  Sampler s;
  BlockedFrom20(s, -1);  // Unknown: maybe waiting for a CPU, held.
  g_cpu_ns += 10 * kMs;  // Ran: the held time is settled, no wait counted.
  REQUIRE(s.At(60));
  CHECK(s.Sent(20, 40));

  Sampler t;
  BlockedFrom20(t, 1);
  g_waited_ns = -1;  // schedstat gone: nothing can settle the held time.
  g_runnable = 0;
  CHECK_FALSE(t.At(60));
  CHECK(t.last.held_end_ns == t.last.held_begin_ns);
}

TEST_CASE("Spans shorter than the minimum wait for a later reading; another instance starts afresh", "[thread_idle]") {
  Reset();
  Sampler s;
  s.At(0);
  s.At(20);
  CHECK_FALSE(s.At(24));  // Too soon: skipped, the next reading measures from 20.
  REQUIRE(s.At(40));
  CHECK(s.Sent(20, 40));
  Sampler reused;  // A buffer taken over by a new thread starts afresh.
  reused.At(0, 1);
  reused.At(20, 1);
  g_runnable = 1;
  CHECK_FALSE(reused.At(40, 1));  // Held...
  g_runnable = 0;
  CHECK_FALSE(reused.At(60, 2));  // ... and dropped with its thread.
  // The new thread's first reading read its run delay: its first span,
  // idle, is sent.
  REQUIRE(reused.At(80, 2));
  CHECK(reused.Sent(60, 80));
}

TEST_CASE("This thread's own clocks can be read, and no thread's cannot", "[thread_idle]") {
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  const int64_t before = ThreadCpuNs(tid);
  REQUIRE(before >= 0);
  volatile double x = 0;
  for (int i = 0; i < 1'000'000; ++i) x = x + i;
  CHECK(ThreadCpuNs(tid) > before);
  CHECK(ThreadWaitedNs(tid) >= 0);
  CHECK(ThreadRunnable(tid) == 1);  // Running: state R.
  // No thread has this id (above any pid_max). (A thread just joined is
  // no test: its task lingers a moment after join returns, seen readable
  // on a busy machine.)
  constexpr uint32_t kNoSuchTid = 1u << 29;
  CHECK(ThreadCpuNs(kNoSuchTid) == -1);
  CHECK(ThreadWaitedNs(kNoSuchTid) == -1);
  CHECK(ThreadRunnable(kNoSuchTid) == -1);
}
