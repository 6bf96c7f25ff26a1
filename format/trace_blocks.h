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
// Within a block each Batch frame's events carry timestamp deltas
// (AppendFrameToBlock): per ThreadEvents, begin_ns is the step from the
// previous event's begin_ns (the first's from 0) and end_ns is end - begin,
// in wrap-around 64-bit arithmetic, so every value comes back exactly
// (kNativeStackFrames keeps addresses there). From version 2 each such
// vector of events is then stored shuffled, byte position by byte position
// (record_shuffle.h). The frame stays a valid FlatBuffer of the same size:
// only the bytes of its event structs move, which the verifier does not
// read; the collector transforms the frame it has just verified, and the
// reader undoes it on the frame it has verified, before anyone sees it.
//
// Why this shape (numbers: scripts/bench/RESULTS.md): the frames hold
// 32-byte event structs whose ids, kinds and flags repeat, but whose
// absolute nanosecond timestamps do not; zstd level 1 alone takes a PPO
// trace from 32 to 7 bytes an event, with the deltas to about 3.9, and the
// deltas make zstd faster too (less to match); the shuffle takes it to 3.6
// and compresses about 1.5x as fast again. Levels 2-3 gain little more.
// Nothing changes in the preload, the frames' schema or the socket
// protocol. Blocks, not one zstd stream: a killed collector or a full disk
// leaves a file of whole blocks, each readable on its own.
//
// The old format (the stream itself, from the first frame's length prefix)
// is told apart by the first four bytes: "RLTZ" read as a length is beyond
// kMaxFrameBytes, so no stream starts with it, and a reader that predates
// blocks says "corrupt frame length" instead of misreading a new file.
// Readers accept versions <= kTraceBlocksVersion and refuse newer ones:
// version 1 is deltas alone, version 2 deltas and the shuffle.
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
inline constexpr uint16_t kTraceBlocksVersion = 2;
// The first version whose event vectors are shuffled (record_shuffle.h).
inline constexpr uint16_t kShuffledEventsVersion = 2;
inline constexpr size_t kTraceFileHeaderBytes = 8;
inline constexpr size_t kBlockHeaderBytes = 8;

// A writer closes a block once it holds this much of the stream (a block
// also closes on time and when the stream ends: collector/receiver.h). zstd
// gains little from larger blocks, and this bounds what a reader holds.
inline constexpr size_t kBlockTargetStreamBytes = size_t{1} << 20;
// The largest stream size a reader accepts in one block: the target plus
// the one frame that crossed it. Larger means damage, not a block.
inline constexpr size_t kMaxBlockStreamBytes = kBlockTargetStreamBytes + sizeof(uint32_t) + wire::kMaxFrameBytes;
// zstd level, with the deltas and the shuffle (RESULTS.md): -1 is about
// 1.2x as fast but larger (3.8 bytes an event against 3.6), 3 smaller
// (3.5) and slower.
inline constexpr int kBlockCompressionLevel = 1;

// TraceFileHeader: the 8 bytes a compressed trace file starts with
// (`version`: what its blocks hold; older ones only for tests).
void AppendTraceFileHeader(std::vector<uint8_t>& out, uint16_t version = kTraceBlocksVersion);

// HasTraceBlocksMagic: whether the `size` bytes at `data` start like a
// compressed trace file (the version is checked by ReadTraceFileHeader).
bool HasTraceBlocksMagic(const uint8_t* data, size_t size);

// ReadTraceFileHeader: the version of a header this rlscope reads; an
// error saying what is wrong (too short, a newer version) otherwise.
absl::StatusOr<uint16_t> ReadTraceFileHeader(const uint8_t* data, size_t size);

struct BlockHeader {
  uint32_t compressed_bytes = 0;
  uint32_t stream_bytes = 0;
};
// ParseBlockHeader: the header at `data` (kBlockHeaderBytes), or an error
// when its sizes cannot be a block's.
absl::StatusOr<BlockHeader> ParseBlockHeader(const uint8_t* data);

// AppendFrameToBlock: appends the `size` bytes of the frame at `frame`
// (`verified` is that frame, verified) to the stream bytes of a block, with
// its timestamp deltas and, from kShuffledEventsVersion, its events
// shuffled: what a writer of blocks does with each frame. `scratch` is
// memory reused from call to call.
void AppendFrameToBlock(const wire::Frame& verified, const uint8_t* frame, size_t size, std::vector<uint8_t>& block,
                        std::vector<uint8_t>& scratch, uint16_t version = kTraceBlocksVersion);
// DecodeBlockFrame: undoes in place what AppendFrameToBlock did to a frame
// of a block of `version`; `frame` must be verified and lie in memory the
// caller owns (a decompressed block). Both visit each event once: of
// vectors that share events (a hostile frame's), only the first by address
// is changed, by the one and undone by the other.
void DecodeBlockFrame(const wire::Frame& frame, uint16_t version, std::vector<uint8_t>& scratch);

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
