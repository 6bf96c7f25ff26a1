#include "preload/string_table.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

using rlscope::preload::StringTable;

TEST_CASE("StringTable gives one id per distinct text", "[string_table]") {
  REQUIRE(StringTable::Init());
  const uint32_t a = StringTable::Intern("inference");
  const uint32_t b = StringTable::Intern("backprop");
  CHECK(a != b);
  CHECK(a != StringTable::kOverflowId);
  CHECK(StringTable::Intern("inference") == a);
  CHECK(StringTable::Text(a) == "inference");
  CHECK(StringTable::Ready(b));
  CHECK(StringTable::Size() > b);
}

TEST_CASE("StringTable truncates overlong text instead of failing", "[string_table]") {
  REQUIRE(StringTable::Init());
  const std::string long_text(StringTable::kMaxTextBytes + 100, 'x');
  const uint32_t id = StringTable::Intern(long_text);
  CHECK(StringTable::Text(id).size() == StringTable::kMaxTextBytes);
}

TEST_CASE("StringTable truncation never splits a UTF-8 character", "[string_table]") {
  REQUIRE(StringTable::Init());
  // 'a' then two-byte characters: byte kMaxTextBytes falls inside one.
  std::string text = "a";
  while (text.size() < StringTable::kMaxTextBytes + 10) text += "\xc3\xa9";
  const std::string_view stored = StringTable::Text(StringTable::Intern(text));
  CHECK(stored.size() == StringTable::kMaxTextBytes - 1);
  CHECK((static_cast<unsigned char>(stored.back()) & 0xC0) == 0x80);  // Ends with a complete character.
}

TEST_CASE("StringTable interning from many threads agrees on every text", "[string_table][concurrency]") {
  REQUIRE(StringTable::Init());
  constexpr int kThreads = 8;
  constexpr int kNames = 500;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Every thread interns the same names, each starting at another one.
      for (int i = 0; i < kNames; ++i) {
        const int name = (i + t * 61) % kNames;
        ids[t][name] = StringTable::Intern("concurrent-name-" + std::to_string(name));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int name = 0; name < kNames; ++name) {
    // A lost race may leave a duplicate id, but every id must carry the
    // right text and a later lookup must be stable.
    const uint32_t settled = StringTable::Intern("concurrent-name-" + std::to_string(name));
    CHECK(StringTable::Text(settled) == "concurrent-name-" + std::to_string(name));
    for (int t = 0; t < kThreads; ++t) {
      CHECK(StringTable::Text(ids[t][name]) == "concurrent-name-" + std::to_string(name));
    }
  }
}

// Last in this file: it fills the process's table.
TEST_CASE("StringTable counts the names that no longer fit", "[string_table]") {
  REQUIRE(StringTable::Init());
  const uint64_t lost_before = StringTable::Lost();
  const uint32_t room = StringTable::kMaxStrings - StringTable::Size();
  for (uint32_t i = 0; i < room; ++i) StringTable::Intern("overflow test fits " + std::to_string(i));
  CHECK(StringTable::Lost() == lost_before);
  for (int i = 0; i < 100; ++i)
    CHECK(StringTable::Intern("overflow test lost " + std::to_string(i)) == StringTable::kOverflowId);
  CHECK(StringTable::Lost() == lost_before + 100);
  CHECK(StringTable::Intern("overflow test fits 7") != StringTable::kOverflowId);  // Known names still resolve.
  CHECK(StringTable::Lost() == lost_before + 100);
  // Lookups of a full table take no id: the table's size stays put.
  CHECK(StringTable::Size() == StringTable::kMaxStrings);
  // A fork child reports its own losses, not its parent's.
  StringTable::RepairAfterFork();
  CHECK(StringTable::Lost() == 0);
  CHECK(StringTable::Intern("overflow test lost again") == StringTable::kOverflowId);
  CHECK(StringTable::Lost() == 1);
}
