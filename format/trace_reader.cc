#include "format/trace_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "flatbuffers/flatbuffers.h"
#include "format/input_file.h"
#include "format/trace_blocks.h"

namespace rlscope::collector {

namespace {

// TraceFile: a trace file read front to back through a window: pread into
// a buffer of at least a frame, never a mapping, so a file truncated while
// it is read (by another program, or a full disk's cleanup) ends reading
// with a message instead of a SIGBUS, and a multi-GB trace never sits in
// memory whole (the buffer holds the largest frame plus one read).
class TraceFile {
 public:
  static absl::StatusOr<TraceFile> Open(const std::string& path) {
    off_t size = 0;
    std::string error;
    const int fd = OpenInputFile(path, Symlinks::kFollow, &size, &error);
    if (fd < 0) return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, error));
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return TraceFile(fd, static_cast<uint64_t>(size));
  }
  TraceFile(TraceFile&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        size_(other.size_),
        buffer_(std::move(other.buffer_)),
        begin_(other.begin_),
        end_(other.end_) {}
  TraceFile& operator=(TraceFile&&) = delete;
  ~TraceFile() {
    if (fd_ >= 0) close(fd_);
  }

  // size: the file's size when it was opened; the reader reads no further.
  uint64_t size() const { return size_; }

  // Bytes: bytes [offset, offset + count) of the file, valid until the next
  // call, or nullptr when they could not be read (error() says why).
  // Offsets only grow, and each call starts at or after the last one's.
  const uint8_t* Bytes(uint64_t offset, size_t count) {
    if (offset >= begin_ && offset + count <= end_) return Data() + (offset - begin_);
    // Keep what is buffered from `offset` on, at the front: a frame starts
    // at the buffer's (aligned) start.
    if (offset < end_ && offset > begin_) {
      memmove(Data(), Data() + (offset - begin_), static_cast<size_t>(end_ - offset));
    }
    const uint64_t kept = offset < end_ ? end_ - offset : 0;
    begin_ = offset;
    end_ = offset + kept;
    const size_t wanted = std::max(count, std::min<size_t>(kReadBytes, static_cast<size_t>(size_ - offset)));
    if (buffer_.size() * sizeof(uint64_t) < wanted) buffer_.resize((wanted + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    while (end_ < begin_ + wanted) {
      const ssize_t n =
          pread(fd_, Data() + (end_ - begin_), static_cast<size_t>(begin_ + wanted - end_), static_cast<off_t>(end_));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = absl::StrFormat("read failed: %s", strerror(errno));
        return nullptr;
      }
      if (n == 0) {
        error_ = absl::StrFormat(
            "the file ended at byte %d while it was read (it was %d bytes when opened: "
            "truncated by another program?)",
            end_, size_);
        return nullptr;
      }
      end_ += static_cast<uint64_t>(n);
    }
    return Data();
  }
  const std::string& error() const { return error_; }

 private:
  // One read: large enough that system calls do not matter, small enough
  // that the buffer stays near the largest frame.
  static constexpr size_t kReadBytes = size_t{4} << 20;

  TraceFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint8_t* Data() { return reinterpret_cast<uint8_t*>(buffer_.data()); }

  int fd_ = -1;
  uint64_t size_ = 0;
  std::vector<uint64_t> buffer_;  // uint64_t: aligned for any scalar a frame holds.
  uint64_t begin_ = 0;            // File offsets of the buffered bytes [begin_, end_).
  uint64_t end_ = 0;
  std::string error_;
};

// MemorySource: a trace already in memory, for ReadTraceBuffer.
class MemorySource {
 public:
  MemorySource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t size() const { return size_; }
  const uint8_t* Bytes(uint64_t offset, size_t) const { return data_ + offset; }
  std::string error() const { return ""; }

 private:
  const uint8_t* data_;
  size_t size_;
};

constexpr size_t kFrameAlignment = alignof(uint64_t);

// AlignedBytes: a byte buffer whose data() is aligned for any scalar.
class AlignedBytes {
 public:
  void assign(const uint8_t* begin, const uint8_t* end) {
    words_.resize((static_cast<size_t>(end - begin) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    if (end != begin) memcpy(words_.data(), begin, static_cast<size_t>(end - begin));
  }
  // resize: `size` bytes, contents unspecified.
  void resize(size_t size) { words_.resize((size + sizeof(uint64_t) - 1) / sizeof(uint64_t)); }
  const void* data() const { return words_.data(); }
  uint8_t* mutable_data() { return reinterpret_cast<uint8_t*>(words_.data()); }
  void release() { std::vector<uint64_t>().swap(words_); }

 private:
  std::vector<uint64_t> words_;
};

// StructsAligned: whether a vector's structs start aligned for their type.
// FlatBuffers' verifier checks only the vector's length field (4 bytes), so
// a damaged frame can put 8-byte structs at a 4-byte boundary, and every
// reader would then read them misaligned (undefined behaviour). An empty
// vector is never aligned by the builder, and never read.
template <typename T>
bool StructsAligned(const flatbuffers::Vector<const T*>* vector) {
  return vector == nullptr || vector->size() == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

bool BatchStructsAligned(const wire::Batch& batch) {
  if (!StructsAligned(batch.gpu_activities())) return false;
  if (batch.threads() == nullptr) return true;
  for (const wire::ThreadEvents* thread : *batch.threads()) {
    if (!StructsAligned(thread->events()) || !StructsAligned(thread->overhead())) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<const wire::Frame*> VerifyFrame(const uint8_t* data, size_t size) {
  // FlatBuffers aligns a size-prefixed buffer from its prefix, so verify the
  // frame together with its prefix, not from the bytes after it.
  if (size < 12 || !flatbuffers::BufferHasIdentifier(data, wire::FrameIdentifier(), /*size_prefixed=*/true)) {
    return absl::DataLossError("not an rlscope frame (identifier RLST missing)");
  }
  flatbuffers::Verifier verifier(data, size);
  if (!wire::VerifySizePrefixedFrameBuffer(verifier)) {
    return absl::DataLossError("frame fails FlatBuffers verification");
  }
  const wire::Frame* frame = wire::GetSizePrefixedFrame(data);
  // A union's type without its value passes the verifier: refused here, so
  // readers can take message_as_X() of the type as present.
  if (frame->message_type() == wire::Message::NONE || frame->message() == nullptr) {
    return absl::DataLossError("frame carries no message");
  }
  if (const wire::Batch* batch = frame->message_as_Batch(); batch != nullptr && !BatchStructsAligned(*batch)) {
    return absl::DataLossError("frame holds misaligned records");
  }
  if (const wire::Hello* hello = frame->message_as_Hello()) {
    if (hello->protocol_version() > wire::kProtocolVersion) {
      return absl::FailedPreconditionError(
          absl::StrFormat("written by a newer rlscope (protocol %d; this one reads up to %d): upgrade rlscope",
                          hello->protocol_version(), wire::kProtocolVersion));
    }
    if (hello->protocol_version() == 0) return absl::DataLossError("Hello without a protocol version");
  }
  return frame;
}

namespace {

// FrameScanner: the frame loop over one stream of length-prefixed frames,
// fed a piece at a time (the whole file of an uncompressed trace, or each
// decompressed block of a compressed one). Offsets are the frames' offsets
// in the stream (for an uncompressed trace, in the file).
class FrameScanner {
 public:
  FrameScanner(const std::string& path, const FrameVisitor& visit, TraceReadResult& result)
      : path_(path), visit_(visit), result_(result) {}

  // Scan: the frames of the `size` bytes at `data` (`Source::Bytes`), which
  // start at stream offset `stream_offset`; `where` (non-empty for a
  // compressed trace) names the block in damage messages. Returns false
  // when reading stops: damage (recorded in result_) or an error
  // (status()). A block must end at a frame boundary.
  template <typename Source>
  // `block_version`: the compressed trace's version (0: a plain stream,
  // whose frames are as sent).
  bool Scan(Source& source, uint64_t size, uint64_t stream_offset, const std::string& where, uint16_t block_version) {
    uint64_t offset = 0;
    while (offset < size) {
      reached_ = stream_offset + offset;
      auto damaged = [&](const std::string& what) {
        first_damage_ = what;
        result_.damage = absl::StrFormat("%s: %s at byte offset %d%s; the %d frame(s) before it were analysed", path_,
                                         what, stream_offset + offset, where, result_.frames);
      };
      if (size - offset < sizeof(uint32_t)) {
        damaged(absl::StrFormat("truncated frame header (%d of 4 bytes)", size - offset));
        return false;
      }
      const uint8_t* header = source.Bytes(offset, sizeof(uint32_t));
      if (header == nullptr) {
        damaged(source.error());
        return false;
      }
      uint32_t length;  // memcpy: after damage the prefix may be misaligned.
      memcpy(&length, header, sizeof(length));
      length = flatbuffers::EndianScalar(length);
      if (length > wire::kMaxFrameBytes) {
        damaged(absl::StrFormat("corrupt frame length %d", length));
        return false;
      }
      if (size - offset - sizeof(uint32_t) < length) {
        damaged(absl::StrFormat("truncated frame (%d bytes announced, %d present)", length,
                                size - offset - sizeof(uint32_t)));
        return false;
      }
      const uint8_t* frame_data = source.Bytes(offset, sizeof(uint32_t) + length);
      if (frame_data == nullptr) {
        damaged(source.error());
        return false;
      }
      // Fields are read in place, so a frame must start aligned for its
      // widest scalar, as the writer's frames (multiples of 8 bytes) always
      // do; one that does not (a damaged or foreign file) is read from an
      // aligned copy.
      if (reinterpret_cast<uintptr_t>(frame_data) % kFrameAlignment != 0) {
        aligned_copy_.assign(frame_data, frame_data + sizeof(uint32_t) + length);
        frame_data = reinterpret_cast<const uint8_t*>(aligned_copy_.data());
      }
      absl::StatusOr<const wire::Frame*> frame = VerifyFrame(frame_data, sizeof(uint32_t) + length);
      if (frame.ok() && result_.frames == 0 && (*frame)->message_type() != wire::Message::Hello) {
        frame = absl::DataLossError("first frame is not a Hello");
      }
      if (!frame.ok()) {
        if (result_.frames == 0) {
          status_ = absl::Status(
              frame.status().code(),
              absl::StrFormat("%s: not a readable rlscope trace: %s (byte offset 0)", path_, frame.status().message()));
          return false;
        }
        damaged(std::string(frame.status().message()));
        return false;
      }
      // A block's frames are ours (decompressed, or copied aligned).
      if (block_version > 0) DecodeBlockFrame(**frame, block_version, scratch_);
      visit_(**frame, stream_offset + offset);
      ++result_.frames;
      offset += sizeof(uint32_t) + length;
    }
    reached_ = stream_offset + offset;
    return true;
  }

  // ReleaseScratch: frees the buffers kept from frame to frame.
  void ReleaseScratch() {
    aligned_copy_.release();
    std::vector<uint8_t>().swap(scratch_);
  }

  // reached: the stream offset up to which frames were read whole.
  uint64_t reached() const { return reached_; }

  // Damaged: damage outside any frame (a compressed block's), at file
  // offset `file_offset`.
  void Damaged(const std::string& what, uint64_t file_offset) {
    first_damage_ = what;
    result_.damage = absl::StrFormat("%s: %s at byte offset %d (of the file); the %d frame(s) before it were analysed",
                                     path_, what, file_offset, result_.frames);
  }

  // Finish: the result once reading stopped, `size` being the file's.
  absl::StatusOr<TraceReadResult> Finish(uint64_t size, uint64_t bytes_read) {
    if (!status_.ok()) return status_;
    if (size == 0) return absl::DataLossError(absl::StrFormat("%s: empty trace file", path_));
    // Damage before any frame: nothing of the file is usable, and it may
    // not be a trace at all (another file renamed .rlt).
    if (result_.frames == 0 && result_.damage) {
      return absl::DataLossError(
          absl::StrFormat("%s: not a readable rlscope trace: %s (byte offset 0)", path_, first_damage_));
    }
    if (result_.frames == 0) {
      return absl::DataLossError(absl::StrFormat("%s: not a readable rlscope trace: it holds no frame", path_));
    }
    result_.bytes = bytes_read;
    return result_;
  }

 private:
  const std::string& path_;
  const FrameVisitor& visit_;
  TraceReadResult& result_;
  AlignedBytes aligned_copy_;
  std::vector<uint8_t> scratch_;  // DecodeBlockFrame's, reused frame to frame.
  std::string first_damage_;
  absl::Status status_;
  uint64_t reached_ = 0;
};

// BlockBytes: a decompressed block, as a source for FrameScanner.
class BlockBytes {
 public:
  explicit BlockBytes(const AlignedBytes& bytes) : bytes_(bytes) {}
  const uint8_t* Bytes(uint64_t offset, size_t) const {
    return reinterpret_cast<const uint8_t*>(bytes_.data()) + offset;
  }
  std::string error() const { return ""; }

 private:
  const AlignedBytes& bytes_;
};

// BlockScan: reading a compressed trace (trace_blocks.h), resumable: each
// block is read, checked and decompressed, then its frames are scanned.
// Damage to a block (its header, its zstd frame, a checksum) stops reading
// at that block, like damage to a frame. A scan that is not final stops
// quietly before a block that does not read whole (a file still growing)
// and goes on from there at the next call.
class BlockScan {
 public:
  enum class Outcome { kAtEnd, kStopped };

  BlockScan(const std::string& path, const FrameVisitor& visit) : path_(path), scanner_(path, visit, result_) {}
  BlockScan(const BlockScan&) = delete;
  BlockScan& operator=(const BlockScan&) = delete;

  // Continue: reads what `source` holds from where the last call stopped.
  // kStopped: damage or an error (Finish says which).
  template <typename Source>
  Outcome Continue(Source& source, bool final) {
    const uint64_t size = source.size();
    if (!version_) {
      if (!final && size < kTraceFileHeaderBytes) return Outcome::kAtEnd;
      const uint8_t* file_header = source.Bytes(0, std::min<uint64_t>(size, kTraceFileHeaderBytes));
      if (file_header == nullptr) {
        if (!final) return Outcome::kAtEnd;
        header_status_ = absl::DataLossError(absl::StrFormat("%s: %s", path_, source.error()));
        return Outcome::kStopped;
      }
      const absl::StatusOr<uint16_t> version =
          ReadTraceFileHeader(file_header, std::min<uint64_t>(size, kTraceFileHeaderBytes));
      if (!version.ok()) {
        header_status_ = absl::Status(
            version.status().code(),
            absl::StrFormat("%s: not a readable rlscope trace: %s (byte offset 0)", path_, version.status().message()));
        return Outcome::kStopped;
      }
      version_ = *version;
    }
    while (offset_ < size) {
      if (size - offset_ < kBlockHeaderBytes) {
        if (!final) return Outcome::kAtEnd;
        scanner_.Damaged(absl::StrFormat("truncated block header (%d of %d bytes)", size - offset_, kBlockHeaderBytes),
                         offset_);
        return Outcome::kStopped;
      }
      // While the file grows, what does not read as a whole block (bytes
      // gone: the writer cut a failed write back; a header or data still
      // being written) is read again at the next call.
      const uint8_t* header_bytes = source.Bytes(offset_, kBlockHeaderBytes);
      if (header_bytes == nullptr) {
        if (!final) return Outcome::kAtEnd;
        scanner_.Damaged(source.error(), offset_);
        return Outcome::kStopped;
      }
      absl::StatusOr<BlockHeader> header = ParseBlockHeader(header_bytes);
      if (!header.ok()) {
        if (!final) return Outcome::kAtEnd;
        scanner_.Damaged(std::string(header.status().message()), offset_);
        return Outcome::kStopped;
      }
      if (size - offset_ - kBlockHeaderBytes < header->compressed_bytes) {
        if (!final) return Outcome::kAtEnd;
        scanner_.Damaged(absl::StrFormat("truncated block (%d bytes announced, %d present)", header->compressed_bytes,
                                         size - offset_ - kBlockHeaderBytes),
                         offset_);
        return Outcome::kStopped;
      }
      const uint8_t* compressed = source.Bytes(offset_, kBlockHeaderBytes + header->compressed_bytes);
      if (compressed == nullptr) {
        if (!final) return Outcome::kAtEnd;
        scanner_.Damaged(source.error(), offset_);
        return Outcome::kStopped;
      }
      stream_.resize(header->stream_bytes);
      if (!decompressor_) decompressor_.emplace();
      if (absl::Status decompressed =
              decompressor_->Decompress(*header, compressed + kBlockHeaderBytes, stream_.mutable_data());
          !decompressed.ok()) {
        if (!final) return Outcome::kAtEnd;
        scanner_.Damaged(std::string(decompressed.message()), offset_);
        return Outcome::kStopped;
      }
      BlockBytes block(stream_);
      if (!scanner_.Scan(block, header->stream_bytes, stream_offset_,
                         absl::StrFormat(" of the stream (in the block at byte %d of the file)", offset_), *version_)) {
        return Outcome::kStopped;
      }
      offset_ += kBlockHeaderBytes + header->compressed_bytes;
      stream_offset_ += header->stream_bytes;
    }
    return Outcome::kAtEnd;
  }

  // Finish: what reading the file of `size` bytes came to.
  absl::StatusOr<TraceReadResult> Finish(uint64_t size) {
    if (!header_status_.ok()) return header_status_;
    return scanner_.Finish(size, offset_);
  }
  uint64_t stream_offset() const { return stream_offset_; }
  // ReleaseScratch: frees the buffers kept from block to block (a
  // followed file's, between reads: a run may follow hundreds).
  void ReleaseScratch() {
    scanner_.ReleaseScratch();
    stream_.release();
    decompressor_.reset();
  }

 private:
  const std::string& path_;
  TraceReadResult result_;
  FrameScanner scanner_;
  std::optional<uint16_t> version_;
  absl::Status header_status_;
  std::optional<BlockDecompressor> decompressor_;
  AlignedBytes stream_;
  uint64_t offset_ = kTraceFileHeaderBytes;
  uint64_t stream_offset_ = 0;
};

template <typename Source>
absl::StatusOr<TraceReadResult> ScanBlocks(Source& source, const std::string& path, const FrameVisitor& visit) {
  BlockScan scan(path, visit);
  scan.Continue(source, /*final=*/true);
  return scan.Finish(source.size());
}

// ScanFrames: the reading loop of ReadTraceFile and ReadTraceBuffer, over a
// TraceFile or a MemorySource, for either format.
template <typename Source>
absl::StatusOr<TraceReadResult> ScanFrames(Source& source, const std::string& path, const FrameVisitor& visit) {
  const uint64_t size = source.size();
  if (size >= sizeof(kTraceBlocksMagic)) {
    const uint8_t* magic = source.Bytes(0, sizeof(kTraceBlocksMagic));
    if (magic != nullptr && HasTraceBlocksMagic(magic, sizeof(kTraceBlocksMagic))) {
      return ScanBlocks(source, path, visit);
    }
  }
  TraceReadResult result;
  FrameScanner scanner(path, visit, result);
  scanner.Scan(source, size, 0, "", /*block_version=*/0);
  return scanner.Finish(size, scanner.reached());
}

}  // namespace

uint64_t TraceStreamBytes(const std::string& path) {
  off_t size = 0;
  std::string error;
  const int fd = OpenInputFile(path, Symlinks::kFollow, &size, &error);
  if (fd < 0) return 0;
  const auto file_size = static_cast<uint64_t>(size);
  uint8_t header[kTraceFileHeaderBytes];
  uint64_t stream = file_size;
  if (pread(fd, header, sizeof(header), 0) == static_cast<ssize_t>(sizeof(header)) &&
      ReadTraceFileHeader(header, sizeof(header)).ok()) {
    stream = 0;
    uint8_t block[kBlockHeaderBytes];
    for (uint64_t offset = kTraceFileHeaderBytes; offset + kBlockHeaderBytes <= file_size;) {
      if (pread(fd, block, sizeof(block), static_cast<off_t>(offset)) != static_cast<ssize_t>(sizeof(block))) break;
      absl::StatusOr<BlockHeader> parsed = ParseBlockHeader(block);
      if (!parsed.ok()) break;
      stream += parsed->stream_bytes;
      offset += kBlockHeaderBytes + parsed->compressed_bytes;
    }
  }
  close(fd);
  return stream;
}

absl::StatusOr<TraceReadResult> ReadTraceFile(const std::string& path, const FrameVisitor& visit) {
  absl::StatusOr<TraceFile> file = TraceFile::Open(path);
  if (!file.ok()) return file.status();
  return ScanFrames(*file, path, visit);
}

struct TraceFollower::State {
  State(const std::string& path, const FrameVisitor& visit) : scan(path, visit) {}
  BlockScan scan;
};

TraceFollower::TraceFollower(std::string path, FrameVisitor visit)
    : path_(std::move(path)), visit_(std::move(visit)), state_(std::make_unique<State>(path_, visit_)) {}

TraceFollower::~TraceFollower() = default;

void TraceFollower::ReadNew() {
  if (mode_ == Mode::kWhole || scan_stopped_) return;
  absl::StatusOr<TraceFile> file = TraceFile::Open(path_);
  if (!file.ok()) return;  // Tried again at the next call, and by Finish.
  if (mode_ == Mode::kUnknown) {
    // A file too short for the format's magic is one just created.
    if (file->size() < sizeof(kTraceBlocksMagic)) return;
    const uint8_t* magic = file->Bytes(0, sizeof(kTraceBlocksMagic));
    if (magic == nullptr) return;
    mode_ = HasTraceBlocksMagic(magic, sizeof(kTraceBlocksMagic)) ? Mode::kBlocks : Mode::kWhole;
    if (mode_ == Mode::kWhole) return;
  }
  scan_stopped_ = state_->scan.Continue(*file, /*final=*/false) == BlockScan::Outcome::kStopped;
  state_->scan.ReleaseScratch();
}

uint64_t TraceFollower::stream_bytes() const { return state_->scan.stream_offset(); }

absl::StatusOr<TraceReadResult> TraceFollower::Finish() {
  // Nothing delivered yet: the whole file, as ReadTraceFile reads it.
  if (mode_ != Mode::kBlocks) return ReadTraceFile(path_, visit_);
  absl::StatusOr<TraceFile> file = TraceFile::Open(path_);
  if (!file.ok()) return file.status();
  if (!scan_stopped_) state_->scan.Continue(*file, /*final=*/true);
  scan_stopped_ = true;
  return state_->scan.Finish(file->size());
}

absl::StatusOr<TraceReadResult> ReadTraceBuffer(const uint8_t* data, size_t size, const std::string& path,
                                                const FrameVisitor& visit) {
  MemorySource source(data, size);
  return ScanFrames(source, path, visit);
}

}  // namespace rlscope::collector
