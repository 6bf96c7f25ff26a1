#include "format/trace_blocks.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "format/record_shuffle.h"

namespace rlscope::collector {

namespace {

void AppendLittleEndian(uint64_t value, size_t bytes, std::vector<uint8_t>& out) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void StoreLittleEndian32(uint32_t value, uint8_t* out) {
  for (size_t i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint32_t LittleEndian32(const uint8_t* data) {
  return static_cast<uint32_t>(data[0]) | static_cast<uint32_t>(data[1]) << 8 | static_cast<uint32_t>(data[2]) << 16 |
         static_cast<uint32_t>(data[3]) << 24;
}

using EventVector = flatbuffers::Vector<const wire::Event*>;

// ForEachEventVector: each event vector of a Batch frame, by address,
// skipping one that overlaps a vector visited before. A verified frame can
// still have two tables name one vector, or vectors overlap (a hostile
// trace): decoding works in place, so bytes visited twice would come out
// wrong. The encoder skips the same vectors, so it writes what the decoder
// undoes.
template <typename Visit>
void ForEachEventVector(const wire::Frame& frame, const Visit& visit) {
  const wire::Batch* batch = frame.message_as_Batch();
  if (batch == nullptr || batch->threads() == nullptr) return;
  absl::InlinedVector<const EventVector*, 16> vectors;
  for (const wire::ThreadEvents* thread : *batch->threads()) {
    if (thread != nullptr && thread->events() != nullptr && thread->events()->size() > 0) {
      vectors.push_back(thread->events());
    }
  }
  const auto begin = [](const EventVector* events) { return reinterpret_cast<uintptr_t>(events->Data()); };
  std::sort(vectors.begin(), vectors.end(),
            [&](const EventVector* a, const EventVector* b) { return begin(a) < begin(b); });
  uintptr_t visited_end = 0;
  for (const EventVector* events : vectors) {
    if (begin(events) < visited_end) continue;
    visit(*events);
    visited_end = begin(events) + events->size() * sizeof(wire::Event);
  }
}

// The 16 timestamp bytes of an event: begin_ns then end_ns, the first
// fields of the frozen 32-byte struct (rlscope_trace.fbs, wire_format.h),
// little-endian like every FlatBuffers scalar.

void StoreTimes(uint8_t* event, uint64_t begin, uint64_t end) {
  memcpy(event, &begin, sizeof(begin));
  memcpy(event + 8, &end, sizeof(end));
}

// EncodeDeltas: the deltas of the verified vector `events` written into
// `out`, the same vector's bytes in a copy of the frame.
void EncodeDeltas(const EventVector& events, uint8_t* out) {
  uint64_t previous = 0;
  for (uint32_t i = 0; i < events.size(); ++i) {
    const wire::Event* event = events.Get(i);
    const auto begin = static_cast<uint64_t>(event->begin_ns());
    const auto end = static_cast<uint64_t>(event->end_ns());
    StoreTimes(out + i * sizeof(wire::Event), begin - previous, end - begin);
    previous = begin;
  }
}

// DecodeDeltas: undoes EncodeDeltas in place.
void DecodeDeltas(const EventVector& events) {
  uint64_t previous = 0;
  for (const wire::Event* event : events) {
    const uint64_t begin = previous + static_cast<uint64_t>(event->begin_ns());
    const uint64_t end = begin + static_cast<uint64_t>(event->end_ns());
    StoreTimes(const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(event)), begin, end);
    previous = begin;
  }
}

}  // namespace

void AppendFrameToBlock(const wire::Frame& verified, const uint8_t* frame, size_t size, std::vector<uint8_t>& block,
                        std::vector<uint8_t>& scratch, uint16_t version) {
  const size_t at = block.size();
  block.insert(block.end(), frame, frame + size);
  uint8_t* copy = block.data() + at;
  ForEachEventVector(verified, [&](const EventVector& events) {
    uint8_t* data = copy + (reinterpret_cast<const uint8_t*>(events.Data()) - frame);
    EncodeDeltas(events, data);
    if (version < kShuffledEventsVersion) return;
    scratch.assign(data, data + events.size() * sizeof(wire::Event));
    ShuffleRecords(scratch.data(), events.size(), data);
  });
}

void DecodeBlockFrame(const wire::Frame& frame, uint16_t version, std::vector<uint8_t>& scratch) {
  ForEachEventVector(frame, [&](const EventVector& events) {
    if (version >= kShuffledEventsVersion) {
      auto* data = const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(events.Data()));
      scratch.assign(data, data + events.size() * sizeof(wire::Event));
      UnshuffleRecords(scratch.data(), events.size(), data);
    }
    DecodeDeltas(events);
  });
}

void AppendTraceFileHeader(std::vector<uint8_t>& out, uint16_t version) {
  out.insert(out.end(), std::begin(kTraceBlocksMagic), std::end(kTraceBlocksMagic));
  AppendLittleEndian(version, 2, out);
  AppendLittleEndian(0, 2, out);
}

bool HasTraceBlocksMagic(const uint8_t* data, size_t size) {
  return size >= sizeof(kTraceBlocksMagic) && memcmp(data, kTraceBlocksMagic, sizeof(kTraceBlocksMagic)) == 0;
}

absl::StatusOr<uint16_t> ReadTraceFileHeader(const uint8_t* data, size_t size) {
  if (size < kTraceFileHeaderBytes || !HasTraceBlocksMagic(data, size)) {
    return absl::DataLossError(
        absl::StrFormat("truncated compressed trace header (%d of %d bytes)", size, kTraceFileHeaderBytes));
  }
  const uint16_t version = static_cast<uint16_t>(data[4] | data[5] << 8);
  if (version > kTraceBlocksVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "written by a newer rlscope (trace blocks version %d; this one reads up to %d): upgrade rlscope", version,
        kTraceBlocksVersion));
  }
  if (version == 0) return absl::DataLossError("compressed trace header without a version");
  return version;
}

absl::StatusOr<BlockHeader> ParseBlockHeader(const uint8_t* data) {
  BlockHeader header{LittleEndian32(data), LittleEndian32(data + 4)};
  if (header.stream_bytes == 0 || header.stream_bytes > kMaxBlockStreamBytes) {
    return absl::DataLossError(absl::StrFormat("corrupt block stream size %d", header.stream_bytes));
  }
  if (header.compressed_bytes == 0 || header.compressed_bytes > ZSTD_compressBound(header.stream_bytes)) {
    return absl::DataLossError(absl::StrFormat("corrupt block size %d", header.compressed_bytes));
  }
  return header;
}

BlockCompressor::BlockCompressor(int level) : context_(ZSTD_createCCtx()), level_(level) {
  if (context_ == nullptr) return;  // Out of memory: AppendBlock says so.
  ZSTD_CCtx_setParameter(context_, ZSTD_c_compressionLevel, level_);
  ZSTD_CCtx_setParameter(context_, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(context_, ZSTD_c_contentSizeFlag, 1);
}

BlockCompressor::~BlockCompressor() { ZSTD_freeCCtx(context_); }

absl::Status BlockCompressor::AppendBlock(const uint8_t* stream, size_t size, std::vector<uint8_t>& out) {
  if (size == 0 || size > kMaxBlockStreamBytes) {
    return absl::InvalidArgumentError(absl::StrFormat("a block of %d stream bytes", size));
  }
  if (context_ == nullptr) return absl::ResourceExhaustedError("no memory for zstd's compression context");
  const size_t start = out.size();
  out.resize(start + kBlockHeaderBytes + ZSTD_compressBound(size));
  const size_t compressed = ZSTD_compress2(context_, out.data() + start + kBlockHeaderBytes,
                                           out.size() - start - kBlockHeaderBytes, stream, size);
  if (ZSTD_isError(compressed)) {
    out.resize(start);
    return absl::InternalError(absl::StrFormat("zstd compression failed: %s", ZSTD_getErrorName(compressed)));
  }
  out.resize(start + kBlockHeaderBytes + compressed);
  StoreLittleEndian32(static_cast<uint32_t>(compressed), out.data() + start);
  StoreLittleEndian32(static_cast<uint32_t>(size), out.data() + start + 4);
  return absl::OkStatus();
}

BlockDecompressor::BlockDecompressor() : context_(ZSTD_createDCtx()) {}

BlockDecompressor::~BlockDecompressor() { ZSTD_freeDCtx(context_); }

absl::Status BlockDecompressor::Decompress(const BlockHeader& header, const uint8_t* compressed, uint8_t* out) {
  if (context_ == nullptr) return absl::ResourceExhaustedError("no memory for zstd's decompression context");
  // The frame must say the size the header says: a zstd frame that ends
  // early, or holds more, is damage (the checksum catches altered bytes).
  const unsigned long long content = ZSTD_getFrameContentSize(compressed, header.compressed_bytes);
  if (content != header.stream_bytes) {
    return absl::DataLossError(
        absl::StrFormat("damaged compressed block (its zstd frame does not hold %d bytes)", header.stream_bytes));
  }
  const size_t n = ZSTD_decompressDCtx(context_, out, header.stream_bytes, compressed, header.compressed_bytes);
  if (ZSTD_isError(n)) {
    return absl::DataLossError(absl::StrFormat("damaged compressed block (zstd: %s)", ZSTD_getErrorName(n)));
  }
  if (n != header.stream_bytes) {
    return absl::DataLossError(
        absl::StrFormat("damaged compressed block (%d of %d bytes decompressed)", n, header.stream_bytes));
  }
  return absl::OkStatus();
}

}  // namespace rlscope::collector
