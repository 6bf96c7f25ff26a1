// Record shuffle: a run of fixed-size 32-byte records (wire::Event) stored
// by byte position, column after column: byte k of record e goes to
// columns[k * count + e]. The kinds, ids, flags and the high bytes of
// timestamp deltas barely change from one event to the next, so laid out
// this way they become long runs that zstd codes faster and smaller (on a
// PPO trace at level 1: 3.6 instead of 3.9 bytes an event, and the
// compression about 1.5x as fast; scripts/bench/RESULTS.md). It is the
// "shuffle" filter of HDF5 and Blosc, for one record size.
#ifndef RLSCOPE_FORMAT_RECORD_SHUFFLE_H_
#define RLSCOPE_FORMAT_RECORD_SHUFFLE_H_

#include <cstddef>
#include <cstdint>

namespace rlscope::collector {

inline constexpr size_t kShuffledRecordBytes = 32;

// ShuffleRecords: the `count` records at `records` into `columns` (both
// count * kShuffledRecordBytes bytes; they must not overlap).
void ShuffleRecords(const uint8_t* records, size_t count, uint8_t* columns);
// UnshuffleRecords: the inverse, `columns` back into `records`.
void UnshuffleRecords(const uint8_t* columns, size_t count, uint8_t* records);

}  // namespace rlscope::collector

#endif  // RLSCOPE_FORMAT_RECORD_SHUFFLE_H_
