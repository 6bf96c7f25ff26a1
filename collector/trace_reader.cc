#include "trace_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "flatbuffers/flatbuffers.h"

namespace rlscope::collector {

namespace {

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels refuse it (EINVAL) and fault page by page.
#endif

// Owns a read-only mapping of a whole file, read front to back: Advance()
// faults in the window ahead of the reader in one call (a page fault per
// 4 KiB dominated analysis time on large traces) and drops what it has
// read, so a multi-GB trace never sits in memory whole.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, strerror(errno)));
    struct stat info{};
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrFormat("%s: not a regular file", path));
    }
    MappedFile file;
    file.size_ = static_cast<size_t>(info.st_size);
    if (file.size_ > 0) {
      void* data = mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        close(fd);
        return absl::InternalError(absl::StrFormat("%s: cannot map: %s", path, strerror(errno)));
      }
      file.data_ = static_cast<const uint8_t*>(data);
      madvise(data, file.size_, MADV_SEQUENTIAL);
      file.Advance(0);
    }
    close(fd);
    return file;
  }
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept
      : data_(other.data_), size_(other.size_), populated_(other.populated_), dropped_(other.dropped_) {
    other.data_ = nullptr;
  }

  // Advance: the reader is done with every byte before `offset` (a frame
  // boundary) and reads on from there, up to a frame (kMaxFrameBytes).
  void Advance(size_t offset) {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t done = offset / page * page;
    if (done >= dropped_ + kWindowBytes) {
      madvise(const_cast<uint8_t*>(data_) + dropped_, done - dropped_, MADV_DONTNEED);
      dropped_ = done;
    }
    const size_t wanted = std::min(size_, offset + kWindowBytes);
    if (populated_ >= wanted) return;
    const size_t from = std::max(populated_, done);
    const size_t to = std::min(size_, from + 2 * kWindowBytes);
    madvise(const_cast<uint8_t*>(data_) + from, to - from, MADV_POPULATE_READ);
    populated_ = to;
  }
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  // At least a frame, so a frame is whole in the window ahead.
  static constexpr size_t kWindowBytes = size_t{wire::kMaxFrameBytes};

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t populated_ = 0;  // Bytes [dropped_, populated_) were faulted in.
  size_t dropped_ = 0;    // Bytes before it were released.
};

constexpr size_t kFrameAlignment = alignof(uint64_t);

// AlignedBytes: a byte buffer whose data() is aligned for any scalar.
class AlignedBytes {
 public:
  void assign(const uint8_t* begin, const uint8_t* end) {
    words_.resize((static_cast<size_t>(end - begin) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    if (end != begin) memcpy(words_.data(), begin, static_cast<size_t>(end - begin));
  }
  const void* data() const { return words_.data(); }

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

absl::StatusOr<TraceReadResult> ReadTraceFile(const std::string& path, const FrameVisitor& visit) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  const uint8_t* data = file->data();
  return ReadTraceBuffer(data, file->size(), path, [&](const wire::Frame& frame, uint64_t offset) {
    visit(frame, offset);
    // The frame was verified, so its size prefix is sound.
    uint32_t length;
    memcpy(&length, data + offset, sizeof(length));
    file->Advance(offset + sizeof(uint32_t) + flatbuffers::EndianScalar(length));
  });
}

absl::StatusOr<TraceReadResult> ReadTraceBuffer(const uint8_t* data, size_t size, const std::string& path,
                                                const FrameVisitor& visit) {
  TraceReadResult result;
  AlignedBytes aligned_copy;
  std::string first_damage;
  uint64_t offset = 0;
  while (offset < size) {
    auto damaged = [&](const std::string& what) {
      first_damage = what;
      result.damage = absl::StrFormat("%s: %s at byte offset %d; the %d frame(s) before it were analysed", path,
                                      what, offset, result.frames);
    };
    if (size - offset < sizeof(uint32_t)) {
      damaged(absl::StrFormat("truncated frame header (%d of 4 bytes)", size - offset));
      break;
    }
    uint32_t length;  // memcpy: after damage the prefix may be misaligned.
    memcpy(&length, data + offset, sizeof(length));
    length = flatbuffers::EndianScalar(length);
    if (length > wire::kMaxFrameBytes) {
      damaged(absl::StrFormat("corrupt frame length %d", length));
      break;
    }
    if (size - offset - sizeof(uint32_t) < length) {
      damaged(absl::StrFormat("truncated frame (%d bytes announced, %d present)", length,
                              size - offset - sizeof(uint32_t)));
      break;
    }
    // Fields are read in place, so a frame must start aligned for its widest
    // scalar, as the writer's frames (multiples of 8 bytes) always do; one
    // that does not (a damaged or foreign file) is read from an aligned copy.
    const uint8_t* frame_data = data + offset;
    if (reinterpret_cast<uintptr_t>(frame_data) % kFrameAlignment != 0) {
      aligned_copy.assign(frame_data, frame_data + sizeof(uint32_t) + length);
      frame_data = reinterpret_cast<const uint8_t*>(aligned_copy.data());
    }
    absl::StatusOr<const wire::Frame*> frame = VerifyFrame(frame_data, sizeof(uint32_t) + length);
    if (frame.ok() && result.frames == 0 && (*frame)->message_type() != wire::Message::Hello) {
      frame = absl::DataLossError("first frame is not a Hello");
    }
    if (!frame.ok()) {
      if (result.frames == 0) {
        return absl::Status(frame.status().code(),
                            absl::StrFormat("%s: not a readable rlscope trace: %s (byte offset 0)", path,
                                            frame.status().message()));
      }
      damaged(std::string(frame.status().message()));
      break;
    }
    visit(**frame, offset);
    ++result.frames;
    offset += sizeof(uint32_t) + length;
  }
  if (size == 0) return absl::DataLossError(absl::StrFormat("%s: empty trace file", path));
  // Damage before any frame: nothing of the file is usable, and it may not
  // be a trace at all (another file renamed .rlt).
  if (result.frames == 0 && result.damage) {
    return absl::DataLossError(
        absl::StrFormat("%s: not a readable rlscope trace: %s (byte offset 0)", path, first_damage));
  }
  result.bytes = offset;
  return result;
}

}  // namespace rlscope::collector
