// StringTable: process-wide interning of names (API functions, operation
// names) into dense 32-bit ids, lock-free and allocation-free so hooks can
// call it. Text lives in an arena mapped once; the flusher sends each id's
// text to the collector once per stream, in id order.
//
// Ids are dense: 0..Size()-1. An id becomes sendable once Ready(id); ids are
// published in insertion order, so the flusher sends the ready prefix.
#ifndef RLSCOPE_PRELOAD_STRING_TABLE_H_
#define RLSCOPE_PRELOAD_STRING_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rlscope::preload {

class StringTable {
 public:
  // Fixed, not grown: lock-free growth would need readers to follow a
  // moving table, and hashing spreads even a few names over all slot
  // pages, so a larger table costs every process its resident memory.
  // Names past it are counted (Lost) and reported.
  static constexpr uint32_t kMaxStrings = 1u << 16;
  static constexpr uint32_t kSlots = 2 * kMaxStrings;  // Load factor <= 1/2.
  static constexpr size_t kArenaBytes = 4u << 20;
  static constexpr size_t kMaxTextBytes = 512;  // Longer text is truncated.
  // Returned when the table or arena is full; its text says so.
  static constexpr uint32_t kOverflowId = 0;

  // Init maps the storage (once, from the preload constructor).
  static bool Init();
  // Intern: the id of `text` (truncated to kMaxTextBytes). Lock-free; safe
  // from any thread and from hooks. Returns kOverflowId when full.
  static uint32_t Intern(std::string_view text);
  // Size: ids handed out so far.
  static uint32_t Size();
  // Text: the text of `id` if it is ready to be sent; empty view otherwise.
  static bool Ready(uint32_t id);
  // RepairAfterFork: in a fork() child, ids another (now vanished) thread
  // had taken but not yet filled would never become ready and would stall
  // the flusher's in-order sending: give them the overflow text. Call with
  // one thread alive (the fork child handler).
  static void RepairAfterFork();
  static std::string_view Text(uint32_t id);
  // Lost: Intern calls that got kOverflowId's text (table or arena full)
  // for a text that was not the overflow text itself: lookups, not distinct
  // names (a kernel's name is looked up at each of its launches). A fork
  // child starts again from 0 (RepairAfterFork).
  static uint64_t Lost();

 private:
  struct Slot {
    std::atomic<uint64_t> key;  // Hash with the top bit set; 0 = empty.
    std::atomic<uint32_t> id_plus_one;
  };
  struct Entry {
    uint32_t offset;
    uint32_t length;
    std::atomic<uint32_t> ready;
  };
  static Slot* slots_;
  static Entry* entries_;
  static char* arena_;
  static std::atomic<uint32_t> next_id_;
  static std::atomic<size_t> arena_used_;
  static std::atomic<uint64_t> lost_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_STRING_TABLE_H_
