#include "preload/string_table.h"

#include <sys/mman.h>

#include <cstring>

namespace rlscope::preload {

// Slot layout: one 64-bit word, published only after the entry's text is in
// place, so a reader that sees a slot can compare the text immediately.
//   bits 63..17: top 47 bits of the text hash (never all zero: bit 63 forced)
//   bits 16..0 : id
// An inserter that loses a race for a slot keeps probing with the id it
// already took; the id then just has no slot (a harmless duplicate text).
namespace {

constexpr int kIdBits = 17;
constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
static_assert(StringTable::kMaxStrings <= kIdMask + 1, "ids must fit the slot word");

uint64_t HashText(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a: short names, no setup cost.
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

void* MapZeroed(size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

}  // namespace

StringTable::Slot* StringTable::slots_ = nullptr;
StringTable::Entry* StringTable::entries_ = nullptr;
char* StringTable::arena_ = nullptr;
std::atomic<uint32_t> StringTable::next_id_{0};
std::atomic<size_t> StringTable::arena_used_{0};
std::atomic<uint64_t> StringTable::lost_{0};

bool StringTable::Init() {
  if (slots_ != nullptr) return true;
  slots_ = static_cast<Slot*>(MapZeroed(sizeof(Slot) * kSlots));
  entries_ = static_cast<Entry*>(MapZeroed(sizeof(Entry) * kMaxStrings));
  arena_ = static_cast<char*>(MapZeroed(kArenaBytes));
  if (slots_ == nullptr || entries_ == nullptr || arena_ == nullptr) {
    slots_ = nullptr;
    return false;
  }
  const uint32_t overflow = Intern("(rlscope: string table full)");
  return overflow == kOverflowId;
}

uint32_t StringTable::Intern(std::string_view text) {
  if (slots_ == nullptr) return kOverflowId;
  if (text.size() > kMaxTextBytes) {
    // Cut at a UTF-8 character boundary: never leave half a character.
    size_t cut = kMaxTextBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut);
  }
  const uint64_t hash_bits = (HashText(text) | (uint64_t{1} << 63)) & ~kIdMask;

  uint32_t my_id = UINT32_MAX;  // Taken lazily, the first time a free slot is seen.
  size_t index = (hash_bits >> kIdBits) & (kSlots - 1);
  for (uint32_t probe = 0; probe < kSlots; ++probe, index = (index + 1) & (kSlots - 1)) {
    uint64_t word = slots_[index].key.load(std::memory_order_acquire);
    if (word == 0) {
      if (my_id == UINT32_MAX) {
        // Full: no id is taken, so the counter cannot wrap around 2^32
        // however often full-table lookups come (one per launch, say).
        if (next_id_.load(std::memory_order_relaxed) >= kMaxStrings) {
          lost_.fetch_add(1, std::memory_order_relaxed);
          return kOverflowId;
        }
        my_id = next_id_.fetch_add(1, std::memory_order_relaxed);
        if (my_id >= kMaxStrings) {  // Lost the race for the last ids.
          lost_.fetch_add(1, std::memory_order_relaxed);
          return kOverflowId;
        }
        const size_t offset = arena_used_.fetch_add(text.size(), std::memory_order_relaxed);
        if (offset + text.size() > kArenaBytes) {
          // Arena full: the id still becomes ready (the flusher sends ids in
          // order and must not stall on it), with the overflow text.
          entries_[my_id].offset = entries_[kOverflowId].offset;
          entries_[my_id].length = entries_[kOverflowId].length;
          entries_[my_id].ready.store(1, std::memory_order_release);
          lost_.fetch_add(1, std::memory_order_relaxed);
          return my_id;
        }
        memcpy(arena_ + offset, text.data(), text.size());
        entries_[my_id].offset = static_cast<uint32_t>(offset);
        entries_[my_id].length = static_cast<uint32_t>(text.size());
        entries_[my_id].ready.store(1, std::memory_order_release);
      }
      if (slots_[index].key.compare_exchange_strong(word, hash_bits | my_id, std::memory_order_acq_rel,
                                                    std::memory_order_acquire)) {
        return my_id;
      }
      // Lost the slot: `word` now holds the winner; fall through to compare.
    }
    if ((word & ~kIdMask) == hash_bits) {
      const uint32_t id = static_cast<uint32_t>(word & kIdMask);
      if (Text(id) == text) return id;
    }
  }
  lost_.fetch_add(1, std::memory_order_relaxed);
  return kOverflowId;
}

uint64_t StringTable::Lost() { return lost_.load(std::memory_order_relaxed); }

void StringTable::RepairAfterFork() {
  lost_.store(0, std::memory_order_relaxed);  // The child's report counts its own.
  if (slots_ == nullptr) return;
  const uint32_t size = Size();
  for (uint32_t id = 0; id < size; ++id) {
    if (entries_[id].ready.load(std::memory_order_relaxed) != 0) continue;
    entries_[id].offset = entries_[kOverflowId].offset;
    entries_[id].length = entries_[kOverflowId].length;
    entries_[id].ready.store(1, std::memory_order_release);
  }
}

uint32_t StringTable::Size() {
  const uint32_t n = next_id_.load(std::memory_order_acquire);
  return n < kMaxStrings ? n : kMaxStrings;
}

bool StringTable::Ready(uint32_t id) {
  return slots_ != nullptr && id < kMaxStrings && entries_[id].ready.load(std::memory_order_acquire) != 0;
}

std::string_view StringTable::Text(uint32_t id) {
  if (!Ready(id)) return {};
  return {arena_ + entries_[id].offset, entries_[id].length};
}

}  // namespace rlscope::preload
