// Record shuffle (format/record_shuffle.h): byte k of record e lands at
// columns[k * count + e], for counts on and off the 16-record groups the
// fast path moves, and unshuffling gives back the records exactly.
#include "format/record_shuffle.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

using rlscope::collector::kShuffledRecordBytes;
using rlscope::collector::ShuffleRecords;
using rlscope::collector::UnshuffleRecords;

TEST_CASE("Shuffled records are stored byte position by byte position, and come back", "[shuffle]") {
  const size_t count = GENERATE(0, 1, 15, 16, 17, 31, 32, 100, 32768);
  INFO(count << " records");
  std::mt19937 random(static_cast<uint32_t>(count));
  std::vector<uint8_t> records(count * kShuffledRecordBytes);
  for (uint8_t& byte : records) byte = static_cast<uint8_t>(random());
  std::vector<uint8_t> columns(records.size(), 0xee);
  ShuffleRecords(records.data(), count, columns.data());
  size_t misplaced = 0;
  for (size_t e = 0; e < count; ++e) {
    for (size_t k = 0; k < kShuffledRecordBytes; ++k) {
      if (columns[k * count + e] != records[e * kShuffledRecordBytes + k]) ++misplaced;
    }
  }
  CHECK(misplaced == 0);
  std::vector<uint8_t> back(records.size(), 0xee);
  UnshuffleRecords(columns.data(), count, back.data());
  CHECK(back == records);
}
