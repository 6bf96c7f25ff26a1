// Trampolines on libsimtest's functions, called through the stub directly:
// every argument and result shape must come out bit-exact, and outermost
// calls must record one kSimulatorCall each.
#include "preload/trampoline.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <csetjmp>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../native/simtest.h"
#include "preload/recorder.h"
#include "preload/string_table.h"
#include "test/preload/fake_recorder.h"

using rlscope::preload::EventRecord;
using rlscope::preload::StringTable;
using rlscope::preload::Trampolines;
using rlscope::wire::EventKind;

namespace {

// The real function: what a GOT patch elsewhere in this process may have
// replaced with a stub.
template <typename Function>
Function Real(Function function) {
  void* address = reinterpret_cast<void*>(function);
  void* target = Trampolines::TargetOf(address);
  return reinterpret_cast<Function>(target != nullptr ? target : address);
}

// Hook: the stub for `function`, typed like it.
template <typename Function>
Function Hook(Function function, const char* name) {
  rlscope::test::StartRecording();
  void* stub = Trampolines::For(reinterpret_cast<void*>(Real(function)), name);
  REQUIRE(stub != nullptr);
  REQUIRE(Trampolines::IsStub(stub));
  return reinterpret_cast<Function>(stub);
}

template <typename T>
bool SameBits(const T& a, const T& b, size_t size = sizeof(T)) {
  return memcmp(&a, &b, size) == 0;
}

std::vector<EventRecord> SimulatorCalls() {
  std::vector<EventRecord> calls;
  for (const EventRecord& record : rlscope::test::TakeRecords()) {
    if (record.kind == EventKind::kSimulatorCall) calls.push_back(record);
  }
  return calls;
}

SimBig MakeBig(long base) { return SimBig{{base, base * 3, -base, base ^ 0x5555, base + 77}}; }

}  // namespace

TEST_CASE("The stub table holds kCapacity stubs of 16 bytes", "[trampoline]") {
  rlscope::test::StartRecording();
  void* stub = Trampolines::For(reinterpret_cast<void*>(Real(&simtest_add)), "simtest_add");
  REQUIRE(stub != nullptr);
  CHECK(Trampolines::IsStub(stub));
  CHECK_FALSE(Trampolines::IsStub(static_cast<char*>(stub) + 1));
  CHECK(Trampolines::TargetOf(stub) == reinterpret_cast<void*>(Real(&simtest_add)));
  CHECK(Trampolines::For(stub, "again") == stub);  // A stub is never wrapped.
  CHECK(Trampolines::For(reinterpret_cast<void*>(Real(&simtest_add)), "other name") == stub);
}

TEST_CASE("Integer arguments on registers and stack arrive bit-exact", "[trampoline]") {
  auto hooked = Hook(&simtest_int_args, "simtest_int_args");
  auto real = Real(&simtest_int_args);
  const long expected = real(1, -2, 3, -4, 5, -6, 7, -8, 9, -10);
  CHECK(hooked(1, -2, 3, -4, 5, -6, 7, -8, 9, -10) == expected);
  CHECK(hooked(-10, 9, -8, 7, -6, 5, -4, 3, -2, 1) == real(-10, 9, -8, 7, -6, 5, -4, 3, -2, 1));
  CHECK(SimulatorCalls().size() == 2);
}

TEST_CASE("Double arguments in xmm0-7 and on the stack arrive bit-exact", "[trampoline]") {
  auto hooked = Hook(&simtest_double_args, "simtest_double_args");
  auto real = Real(&simtest_double_args);
  const double expected = real(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2);
  const double got = hooked(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2);
  CHECK(SameBits(got, expected));
}

TEST_CASE("Mixed integer, float and aggregate arguments arrive bit-exact", "[trampoline]") {
  auto hooked = Hook(&simtest_mixed_args, "simtest_mixed_args");
  auto real = Real(&simtest_mixed_args);
  const SimBig big = MakeBig(12345);
  const double expected = real(1, 1.5, 2, 2.5f, 3, 3.5, 'x', 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9.5, 9, 10.5f, big);
  const double got = hooked(1, 1.5, 2, 2.5f, 3, 3.5, 'x', 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9.5, 9, 10.5f, big);
  CHECK(SameBits(got, expected));
  auto big_arg = Hook(&simtest_big_arg, "simtest_big_arg");
  CHECK(big_arg(-3, big, 2.75) == Real(&simtest_big_arg)(-3, big, 2.75));
}

TEST_CASE("Struct results in rax:rdx, xmm0:xmm1, mixed and by hidden pointer are bit-exact", "[trampoline]") {
  auto pair_hook = Hook(&simtest_pair, "simtest_pair");
  auto vec_hook = Hook(&simtest_vec2, "simtest_vec2");
  auto mixed_hook = Hook(&simtest_mixed, "simtest_mixed");
  auto big_hook = Hook(&simtest_big, "simtest_big");
  const SimPair pair = pair_hook(123456789, -987654321);
  CHECK(SameBits(pair, Real(&simtest_pair)(123456789, -987654321)));
  const SimVec2 vec = vec_hook(1.25, -7.5);
  CHECK(SameBits(vec, Real(&simtest_vec2)(1.25, -7.5)));
  const SimMixed mixed = mixed_hook(3.75, 11);
  CHECK(SameBits(mixed, Real(&simtest_mixed)(3.75, 11)));
  const SimBig big = big_hook(99);
  CHECK(SameBits(big, Real(&simtest_big)(99)));
  CHECK(SimulatorCalls().size() == 4);
}

TEST_CASE("double, float and long double (x87) results are bit-exact", "[trampoline]") {
  const double d = Hook(&simtest_double, "simtest_double")(1.7);
  CHECK(SameBits(d, Real(&simtest_double)(1.7)));
  const float f = Hook(&simtest_float, "simtest_float")(3.3f);
  CHECK(SameBits(f, Real(&simtest_float)(3.3f)));
  const long double x = 1.0L / 3.0L, y = 2.000000000000000001L;
  const long double extended = Hook(&simtest_long_double, "simtest_long_double")(x, y);
  const long double expected = Real(&simtest_long_double)(x, y);
  CHECK(SameBits(extended, expected, 10));  // The 80 significant bits.
}

TEST_CASE("Variadic calls keep al and their arguments", "[trampoline]") {
  auto hooked = Hook(&simtest_variadic, "simtest_variadic");
  auto real = Real(&simtest_variadic);
  const double expected = real(5, 1L, 0.5, 2L, 0.25, 3L, 0.125, 4L, 1e-3, 5L, 1e9);
  CHECK(SameBits(hooked(5, 1L, 0.5, 2L, 0.25, 3L, 0.125, 4L, 1e-3, 5L, 1e9), expected));
  // Nine doubles: one beyond xmm7, read from the stack.
  const double many = real(9, 1L, 1.1, 2L, 2.2, 3L, 3.3, 4L, 4.4, 5L, 5.5, 6L, 6.6, 7L, 7.7, 8L, 8.8, 9L, 9.9);
  CHECK(SameBits(hooked(9, 1L, 1.1, 2L, 2.2, 3L, 3.3, 4L, 4.4, 5L, 5.5, 6L, 6.6, 7L, 7.7, 8L, 8.8, 9L, 9.9), many));
}

TEST_CASE("Each outermost call records one interval with its name and address", "[trampoline]") {
  auto hooked = Hook(&simtest_add, "simtest_add");
  SimulatorCalls();
  for (int i = 0; i < 5; ++i) CHECK(hooked(i, 2) == i + 2);
  const std::vector<EventRecord> calls = SimulatorCalls();
  REQUIRE(calls.size() == 5);
  for (const EventRecord& call : calls) {
    CHECK(StringTable::Text(call.name_id) == "simtest_add");
    CHECK(call.payload == reinterpret_cast<uint64_t>(Real(&simtest_add)));
    CHECK(call.begin_ticks <= call.end_ticks);
  }
  CHECK(Trampolines::ShadowDepth() == 0);
}

TEST_CASE("Nested hooked calls: only the outermost records, results exact", "[trampoline]") {
  auto hooked = Hook(&simtest_recursive, "simtest_recursive");
  SimulatorCalls();
  const long expected = Real(&simtest_recursive)(20, reinterpret_cast<void*>(Real(&simtest_recursive)));
  // Every level calls the next through the stub: 21 hooked calls deep,
  // deeper than nothing in particular, one record.
  CHECK(hooked(20, reinterpret_cast<void*>(hooked)) == expected);
  CHECK(SimulatorCalls().size() == 1);
  CHECK(Trampolines::ShadowDepth() == 0);
  CHECK(rlscope::preload::t_state.hook_depth == 0);
  // Far deeper than the shadow stack: inner calls never take entries.
  CHECK(hooked(1000, reinterpret_cast<void*>(hooked)) ==
        Real(&simtest_recursive)(1000, reinterpret_cast<void*>(Real(&simtest_recursive))));
  CHECK(SimulatorCalls().size() == 1);
}

TEST_CASE("Recorded durations match a 1 ms busy wait", "[trampoline]") {
  auto hooked = Hook(&simtest_busy_wait_ns, "simtest_busy_wait_ns");
  SimulatorCalls();
  for (int i = 0; i < 5; ++i) hooked(1'000'000);
  const std::vector<EventRecord> calls = SimulatorCalls();
  REQUIRE(calls.size() == 5);
  for (const EventRecord& call : calls) {
    // Ticks are CLOCK_MONOTONIC ns here. At least the wait; preemption on a
    // loaded machine can add, so the upper bound is generous.
    const uint64_t duration_ns = call.end_ticks - call.begin_ticks;
    CHECK(duration_ns >= 1'000'000);
    CHECK(duration_ns < 50'000'000);
  }
}

TEST_CASE("errno set by the hooked function survives the exit", "[trampoline]") {
  auto hooked = Hook(&simtest_set_errno, "simtest_set_errno");
  errno = 0;
  CHECK(hooked(ERANGE) == ERANGE);
  CHECK(errno == ERANGE);
}

TEST_CASE("When not recording, calls pass straight through", "[trampoline]") {
  auto hooked = Hook(&simtest_int_args, "simtest_int_args");
  rlscope::preload::g_recording = false;
  const long got = hooked(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
  rlscope::preload::g_recording = true;
  CHECK(got == Real(&simtest_int_args)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  CHECK(SimulatorCalls().empty());
  CHECK(Trampolines::ShadowDepth() == 0);
}

TEST_CASE("Eight threads calling concurrently each record their own calls", "[trampoline]") {
  auto hooked = Hook(&simtest_int_args, "simtest_int_args");
  auto real = Real(&simtest_int_args);
  constexpr int kThreads = 8;
  constexpr int kCalls = 2000;  // Below a ring's capacity: nothing dropped.
  std::atomic<int> wrong_results{0};
  std::vector<size_t> recorded(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        if (hooked(t, i, 3, 4, 5, 6, 7, 8, t * i, -i) != real(t, i, 3, 4, 5, 6, 7, 8, t * i, -i)) ++wrong_results;
      }
      recorded[t] = SimulatorCalls().size();
      if (Trampolines::ShadowDepth() != 0) ++wrong_results;
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(wrong_results == 0);
  for (int t = 0; t < kThreads; ++t) CHECK(recorded[t] == kCalls);
}

namespace {

void Throw(void*) { throw std::runtime_error("from a callback inside a hooked call"); }

}  // namespace

TEST_CASE("A C++ exception unwinds through a hooked call, which is recorded", "[trampoline]") {
  auto hooked = Hook(&simtest_call, "simtest_call");
  SimulatorCalls();
  bool caught = false;
  try {
    hooked(&Throw, nullptr);
  } catch (const std::runtime_error& error) {
    caught = std::string(error.what()) == "from a callback inside a hooked call";
  }
  CHECK(caught);
  CHECK(Trampolines::ShadowDepth() == 0);
  CHECK(rlscope::preload::t_state.hook_depth == 0);
  CHECK(SimulatorCalls().size() == 1);
  // And the thread goes on recording normally.
  CHECK(hooked(
            +[](void*) {}, nullptr) == 1);
  CHECK(SimulatorCalls().size() == 1);
}

namespace {

jmp_buf g_jump;
void JumpOut(void*) { longjmp(g_jump, 1); }

// Keeps the setjmp in its own frame, as a program's error handler would be.
__attribute__((noinline)) bool CallAndJumpOut(int (*hooked)(void (*)(void*), void*)) {
  if (setjmp(g_jump) != 0) return true;
  hooked(&JumpOut, nullptr);
  return false;
}

}  // namespace

TEST_CASE("After a longjmp out of a hooked call, later calls record again", "[trampoline]") {
  auto hooked = Hook(&simtest_call, "simtest_call");
  SimulatorCalls();
  CHECK(CallAndJumpOut(hooked));
  // The abandoned entry is still there; nothing was recorded for it.
  CHECK(SimulatorCalls().empty());
  auto add = Hook(&simtest_add, "simtest_add");
  CHECK(add(2, 3) == 5);  // Notices the abandoned entry, records normally.
  CHECK(SimulatorCalls().size() == 1);
  CHECK(Trampolines::ShadowDepth() == 0);
  CHECK(rlscope::preload::t_state.hook_depth == 0);
}

// Last: it uses up the remaining stubs of this process.
TEST_CASE("Beyond kCapacity functions, For returns null and calls stay unhooked", "[trampoline][capacity]") {
  rlscope::test::StartRecording();
  static char distinct_targets[Trampolines::kCapacity + 1];
  void* first = Trampolines::For(&distinct_targets[0], "target0");
  REQUIRE(first != nullptr);
  for (int i = 1; i < Trampolines::kCapacity + 1; ++i) Trampolines::For(&distinct_targets[i], "target");
  CHECK(Trampolines::Count() == Trampolines::kCapacity);
  CHECK(Trampolines::For(&distinct_targets[Trampolines::kCapacity], "one too many") == nullptr);
  CHECK(Trampolines::For(&distinct_targets[0], "target0") == first);  // Existing ones still answer.
}
