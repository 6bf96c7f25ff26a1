#include "preload/blocking_calls.h"

#include <catch2/catch.hpp>
#include <cstring>

using rlscope::preload::BlockingCalls;
using rlscope::preload::kBlockingCallableCount;
using rlscope::preload::kBlockingCallables;

TEST_CASE("BlockingCalls recognises exactly the functions added", "[blocking]") {
  BlockingCalls calls;
  // Function addresses of one module lie close together: neighbours must
  // not collide into false positives.
  for (uintptr_t f = 0x500000; f < 0x500000 + 40 * 16; f += 16) REQUIRE(calls.Add(f));
  CHECK(calls.size() == 40);
  for (uintptr_t f = 0x500000; f < 0x500000 + 40 * 16; f += 16) CHECK(calls.Contains(f));
  CHECK_FALSE(calls.Contains(0x500008));
  CHECK_FALSE(calls.Contains(0x400000));
  CHECK_FALSE(calls.Contains(0));  // Unknown callee: never a wait.
  REQUIRE(calls.Add(0x500000));    // Twice is once.
  CHECK(calls.size() == 40);
}

TEST_CASE("BlockingCalls refuses to fill up, so probes stay short and end", "[blocking]") {
  BlockingCalls calls;
  size_t added = 0;
  while (calls.Add(0x1000 + added * 64)) ++added;
  CHECK(added < BlockingCalls::kSlots);
  CHECK_FALSE(calls.Contains(0x7777));  // A miss terminates on a full-ish table.
}

TEST_CASE("the list of blocking callables fits the set and names C modules", "[blocking]") {
  CHECK(kBlockingCallableCount < BlockingCalls::kSlots / 2);
  for (size_t i = 0; i < kBlockingCallableCount; ++i) {
    CHECK(std::strchr(kBlockingCallables[i].module, '.') == nullptr);
    CHECK(std::strlen(kBlockingCallables[i].path) > 0);
  }
}
