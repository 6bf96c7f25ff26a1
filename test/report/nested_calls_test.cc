#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <random>
#include <vector>

#include "report/process_timeline.h"

namespace rlscope::report {
namespace {

NativeCall Call(int64_t begin_ns, int64_t end_ns) {
  NativeCall call;
  call.begin_ns = begin_ns;
  call.end_ns = end_ns;
  return call;
}

// The definition, call by call: a call is nested when another holds it,
// beginning no later and ending no earlier, with the call beginning before
// that one ends (a zero-length call where another begins is inside it).
// Meant for calls that nest properly; of two identical calls either one
// may be the nested one, so the random sets hold none.
std::vector<bool> Reference(const std::vector<NativeCall>& calls) {
  std::vector<bool> nested(calls.size(), false);
  for (size_t i = 0; i < calls.size(); ++i) {
    for (size_t j = 0; j < calls.size(); ++j) {
      const NativeCall &inner = calls[i], &outer = calls[j];
      if (j != i && outer.begin_ns <= inner.begin_ns && inner.end_ns <= outer.end_ns && inner.begin_ns < outer.end_ns) {
        nested[i] = true;
      }
    }
  }
  return nested;
}

// A random call tree over [begin, end), appended as a profiler records the
// calls: each as it returns, after the calls inside it. Zero-length calls
// and calls sharing a begin or an end with their caller included.
void AppendTree(std::mt19937& random, int64_t begin, int64_t end, int depth, std::vector<NativeCall>& out) {
  int64_t at = begin;
  while (at < end && depth < 4) {
    const int64_t child_begin = at + static_cast<int64_t>(random() % 3);
    if (child_begin > end) break;
    const int64_t child_end = std::min(end, child_begin + static_cast<int64_t>(random() % 12));
    AppendTree(random, child_begin, child_end, depth + 1, out);
    out.push_back(Call(child_begin, child_end));
    at = child_end + static_cast<int64_t>(random() % 2);
    if (random() % 4 == 0) break;
  }
}

// RandomCalls: a random forest of calls in return order, identical calls
// dropped after their first (which keeps the order).
std::vector<NativeCall> RandomCalls(std::mt19937& random) {
  std::vector<NativeCall> calls, kept;
  AppendTree(random, 0, 40, 0, calls);
  for (const NativeCall& call : calls) {
    const bool seen = std::any_of(kept.begin(), kept.end(), [&](const NativeCall& other) {
      return other.begin_ns == call.begin_ns && other.end_ns == call.end_ns;
    });
    if (!seen) kept.push_back(call);
  }
  return kept;
}

TEST_CASE("nested calls: calls in return order are read in one pass, as sorting would", "[nested_calls]") {
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    const std::vector<NativeCall> calls = RandomCalls(random);
    INFO("round " << round << ", " << calls.size() << " calls");
    REQUIRE(NestedCalls(calls) == Reference(calls));
  }
}

TEST_CASE("nested calls: calls in another order or overlapping still follow the definition", "[nested_calls]") {
  SECTION("shuffled") {
    std::mt19937 random(11);
    for (int round = 0; round < 500; ++round) {
      std::vector<NativeCall> calls = RandomCalls(random);
      std::shuffle(calls.begin(), calls.end(), random);
      REQUIRE(NestedCalls(calls) == Reference(calls));
    }
  }
  SECTION("an outer call recorded before the call inside it") {
    const std::vector<NativeCall> calls = {Call(0, 10), Call(2, 10)};
    REQUIRE(NestedCalls(calls) == std::vector<bool>{false, true});
  }
  SECTION("two calls that overlap without one holding the other: the later one counts as nested") {
    const std::vector<NativeCall> calls = {Call(0, 6), Call(4, 9), Call(10, 12)};
    REQUIRE(NestedCalls(calls) == std::vector<bool>{false, true, false});
  }
  SECTION("a call that ends before it begins (damaged data)") {
    const std::vector<NativeCall> calls = {Call(2, 4), Call(9, 5), Call(8, 12), Call(0, 12)};
    REQUIRE(NestedCalls(calls) == std::vector<bool>{true, true, true, false});
  }
  SECTION("a zero-length call where another ends and the next begins") {
    const std::vector<NativeCall> calls = {Call(0, 5), Call(5, 5), Call(5, 9)};
    REQUIRE(NestedCalls(calls) == std::vector<bool>{false, true, false});
    REQUIRE(NestedCalls(calls) == Reference(calls));
  }
}

TEST_CASE("nested calls: a deep chain and long runs of siblings", "[nested_calls]") {
  std::vector<NativeCall> calls;
  for (int64_t i = 0; i < 1000; ++i) calls.push_back(Call(10 * i, 10 * i + 5));    // Siblings.
  for (int64_t i = 999; i >= 0; --i) calls.push_back(Call(20000 - i, 20000 + i));  // Each inside the next.
  const std::vector<bool> nested = NestedCalls(calls);
  REQUIRE(nested == Reference(calls));
  REQUIRE(std::count(nested.begin(), nested.end(), true) == 999);
}

}  // namespace
}  // namespace rlscope::report
