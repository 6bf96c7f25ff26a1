// Trace blocks: the compressed on-disk form of a trace file (trace/<pid>.rlt).
// The stream of wire_format.h (length-prefixed frames) is cut, at frame
// boundaries, into blocks, and each block is stored as one zstd frame:
//
//   file   := FileHeader Block*
//   FileHeader (8 bytes) := "RLTZ" uint16 version (kTraceBlocksVersion)
//                           uint16 0
//   Block  := uint32 compressed size C, uint32 stream size S (both
//             little-endian), then C bytes: one zstd frame holding S bytes
//             of the stream (whole frames), with zstd's content size and
//             checksum, so a damaged block is detected, never misread.
//
// Why this shape: the frames are verified FlatBuffers with 32-byte event
// structs; zstd level 1 on blocks of many frames takes most of their
// redundancy (repeated ids, kinds, close timestamps) at more than 1 GB/s on
// one core (scripts/bench/RESULTS.md), with no change to the frames, the
// preload or the socket protocol, and a reader gets back exactly the bytes
// the collector received. Blocks, not one zstd stream: a killed collector
// or a full disk leaves a file of whole blocks, each readable on its own.
// A delta transform of the timestamps measured little on top of zstd
// (RESULTS.md) and is not done.
//
// The old format (the stream itself, from the first frame's length prefix)
// is told apart by the first four bytes: "RLTZ" read as a length is beyond
// kMaxFrameBytes, so no stream starts with it, and a reader that predates
// blocks says "corrupt frame length" instead of misreading a new file.
// Readers accept versions <= kTraceBlocksVersion and refuse newer ones.
#ifndef RLSCOPE_FORMAT_TRACE_BLOCKS_H_
#define RLSCOPE_FORMAT_TRACE_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/wire_format.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace rlscope::collector {

inline constexpr uint8_t kTraceBlocksMagic[4] = {'R', 'L', 'T', 'Z'};
inline constexpr uint16_t kTraceBlocksVersion = 1;
inline constexpr size_t kTraceFileHeaderBytes = 8;
inline constexpr size_t kBlockHeaderBytes = 8;

// A writer closes a block once it holds this much of the stream (a block
// also closes on time and when the stream ends: collector/receiver.h). zstd
// gains little from larger blocks, and this bounds what a reader holds.
inline constexpr size_t kBlockTargetStreamBytes = size_t{1} << 20;
// The largest stream size a reader accepts in one block: the target plus
// the one frame that crossed it. Larger means damage, not a block.
inline constexpr size_t kMaxBlockStreamBytes = kBlockTargetStreamBytes + sizeof(uint32_t) + wire::kMaxFrameBytes;
// zstd level: 1 keeps the collector above 1 GB/s on one core; 2-3 saved
// under 10% more (RESULTS.md).
inline constexpr int kBlockCompressionLevel = 1;

// TraceFileHeader: the 8 bytes a compressed trace file starts with.
void AppendTraceFileHeader(std::vector<uint8_t>& out);

// HasTraceBlocksMagic: whether the `size` bytes at `data` start like a
// compressed trace file (the version is checked by ReadTraceFileHeader).
bool HasTraceBlocksMagic(const uint8_t* data, size_t size);

// ReadTraceFileHeader: OK for a header this rlscope reads; an error saying
// what is wrong (too short, a newer version) otherwise.
absl::Status ReadTraceFileHeader(const uint8_t* data, size_t size);

struct BlockHeader {
  uint32_t compressed_bytes = 0;
  uint32_t stream_bytes = 0;
};
// ParseBlockHeader: the header at `data` (kBlockHeaderBytes), or an error
// when its sizes cannot be a block's.
absl::StatusOr<BlockHeader> ParseBlockHeader(const uint8_t* data);

// BlockCompressor: compresses blocks with one reused zstd context.
class BlockCompressor {
 public:
  explicit BlockCompressor(int level = kBlockCompressionLevel);
  ~BlockCompressor();
  BlockCompressor(const BlockCompressor&) = delete;
  BlockCompressor& operator=(const BlockCompressor&) = delete;

  // AppendBlock: appends the block (header and zstd frame) holding the
  // `size` stream bytes at `stream` to `out`.
  absl::Status AppendBlock(const uint8_t* stream, size_t size, std::vector<uint8_t>& out);

 private:
  ZSTD_CCtx_s* context_;
  int level_;
};

// BlockDecompressor: decompresses blocks with one reused zstd context.
class BlockDecompressor {
 public:
  BlockDecompressor();
  ~BlockDecompressor();
  BlockDecompressor(const BlockDecompressor&) = delete;
  BlockDecompressor& operator=(const BlockDecompressor&) = delete;

  // Decompress: the `header.compressed_bytes` at `compressed` into `out`
  // (exactly header.stream_bytes, or an error: damaged data, a size or
  // checksum that does not match). `out` must hold stream_bytes.
  absl::Status Decompress(const BlockHeader& header, const uint8_t* compressed, uint8_t* out);

 private:
  ZSTD_DCtx_s* context_;
};

}  // namespace rlscope::collector

#endif  // RLSCOPE_FORMAT_TRACE_BLOCKS_H_
