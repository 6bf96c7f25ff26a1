#include "collector/receiver.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <iostream>

#include "absl/strings/str_format.h"
#include "collector/file_output.h"
#include "flatbuffers/flatbuffers.h"
#include "format/run_layout.h"
#include "format/trace_blocks.h"
#include "format/trace_reader.h"
#include "format/wire_format.h"
#include "report/memory_budget.h"
#include "report/report_vocabulary.h"

namespace rlscope::collector {

struct Receiver::Connection {
  int fd = -1;
  int pid = 0;  // Known after the Hello.
  std::vector<uint8_t> pending;
  size_t pending_offset = 0;  // Bytes of `pending` already consumed.
  // The trace file, written with plain write() per frame: what the
  // collector received is in the kernel's hands at once, so it survives a
  // SIGKILL of the collector (a stdio buffer would not).
  int trace_fd = -1;
  std::string trace_path;
  uint64_t written_bytes = 0;         // Whole frames (or blocks) on disk, with the file header.
  uint64_t written_stream_bytes = 0;  // Of the stream, in those.
  bool hello_written = false;
  // Compressed traces (trace_blocks.h): the frames received since the last
  // block was written, and when the first of them came.
  std::vector<uint8_t> block;
  std::chrono::steady_clock::time_point block_started;
  // After a failed write (disk full, file size limit, I/O error) the file
  // is cut back to its last whole frame and later frames are only counted.
  std::string write_error;
  uint64_t lost_bytes = 0;
};

namespace {

constexpr size_t kReadChunkBytes = 256 * 1024;

bool IsAbstract(const std::string& socket_path) { return !socket_path.empty() && socket_path[0] == '@'; }

// PeerIsUs: an abstract socket has no file permissions, so any local user
// could connect; only our own user's processes may stream.
bool PeerIsUs(int fd) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && (peer.uid == geteuid() || peer.uid == 0);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Receiver>> Receiver::Listen(const std::string& socket_path,
                                                           const std::string& trace_dir) {
  sockaddr_un address{};
  if (socket_path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat("socket path too long: %s", socket_path));
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(absl::StrFormat("socket: %s", strerror(errno)));
  address.sun_family = AF_UNIX;
  socklen_t address_size = sizeof(address);
  if (IsAbstract(socket_path)) {
    // The name is the bytes after the leading NUL, without padding.
    memcpy(address.sun_path + 1, socket_path.data() + 1, socket_path.size() - 1);
    address_size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path.size());
  } else {
    memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), address_size) != 0 || listen(fd, 128) != 0) {
    const std::string why = strerror(errno);
    close(fd);
    return absl::InternalError(absl::StrFormat("cannot listen on %s: %s", socket_path, why));
  }
  return std::unique_ptr<Receiver>(new Receiver(fd, socket_path, trace_dir));
}

Receiver::Receiver(int listen_fd, std::string socket_path, std::string trace_dir)
    : listen_fd_(listen_fd), socket_path_(std::move(socket_path)), trace_dir_(std::move(trace_dir)) {}

Receiver::~Receiver() {
  CloseAll();
  if (listen_fd_ >= 0) close(listen_fd_);  // An abstract name goes with it.
  if (!IsAbstract(socket_path_)) unlink(socket_path_.c_str());
}

void Receiver::AppendPollFds(std::vector<pollfd>& fds) const {
  fds.push_back({listen_fd_, POLLIN, 0});
  for (const auto& connection : connections_) fds.push_back({connection->fd, POLLIN, 0});
}

void Receiver::OnPollResult(const pollfd* fds, size_t count) {
  // fds[0] is the listening socket, then connections in connections_ order.
  std::vector<Connection*> finished;
  for (size_t i = 1; i < count && i - 1 < connections_.size(); ++i) {
    if (fds[i].revents == 0) continue;
    Connection& connection = *connections_[i - 1];
    if (!Read(connection)) finished.push_back(&connection);
  }
  for (Connection* connection : finished) {
    Finish(*connection);
    std::erase_if(connections_, [&](const auto& c) { return c.get() == connection; });
  }
  if (count > 0 && (fds[0].revents & POLLIN) != 0) Accept();
}

void Receiver::Accept() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: accepted everything pending.
    if (IsAbstract(socket_path_) && !PeerIsUs(fd)) {
      if (!refused_peer_) problems_.push_back("a process of another user connected to the collector; refused");
      refused_peer_ = true;
      close(fd);
      continue;
    }
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    connections_.push_back(std::move(connection));
    ++stats_.connections;
  }
}

bool Receiver::Read(Connection& connection) {
  // A bounded number of chunks per poll round, so one busy process cannot
  // starve the others (or the child-exit handling) of attention.
  for (int chunk = 0; chunk < 16; ++chunk) {
    const size_t old_size = connection.pending.size();
    connection.pending.resize(old_size + kReadChunkBytes);
    const ssize_t n = read(connection.fd, connection.pending.data() + old_size, kReadChunkBytes);
    connection.pending.resize(old_size + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) {
      stats_.bytes += static_cast<uint64_t>(n);
      if (!ConsumeFrames(connection)) return false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;  // EOF or error: the process is done (or gone).
  }
  return true;
}

bool Receiver::ConsumeFrames(Connection& connection) {
  for (;;) {
    const uint8_t* begin = connection.pending.data() + connection.pending_offset;
    const size_t available = connection.pending.size() - connection.pending_offset;
    if (available < sizeof(uint32_t)) break;
    const uint32_t length = flatbuffers::ReadScalar<uint32_t>(begin);
    const std::string who = connection.pid != 0 ? absl::StrFormat("process %d", connection.pid) : "a process";
    if (length > wire::kMaxFrameBytes) {
      problems_.push_back(
          absl::StrFormat("%s sent a corrupt frame length (%d); its stream was cut there", who, length));
      return false;
    }
    if (available - sizeof(uint32_t) < length) break;
    absl::StatusOr<const wire::Frame*> frame = VerifyFrame(begin, sizeof(uint32_t) + length);
    if (!frame.ok()) {
      problems_.push_back(
          absl::StrFormat("%s sent a bad frame (%s); its stream was cut there", who, frame.status().message()));
      return false;
    }
    if (connection.trace_fd < 0) {
      const wire::Hello* hello = (*frame)->message_as_Hello();
      if (hello == nullptr) {
        problems_.push_back("a connection did not start with a Hello frame; ignored");
        return false;
      }
      connection.pid = hello->pid();
      if (!stopped_.empty()) {  // No empty trace file for it: it is simply not recorded.
        problems_.push_back(absl::StrFormat("process %d started after trace recording %s; it is not recorded",
                                            connection.pid, stopped_));
        return false;
      }
      if (!OpenTraceFile(connection, hello->pid())) return false;
    }
    const size_t frame_bytes = sizeof(uint32_t) + length;
    WriteFrame(connection, **frame, begin, frame_bytes);
    ++stats_.frames;
    CountBatch(**frame);
    connection.pending_offset += frame_bytes;
  }
  // Compact once the consumed prefix dominates, keeping appends amortised O(1).
  if (connection.pending_offset > 0 && connection.pending_offset * 2 >= connection.pending.size()) {
    connection.pending.erase(connection.pending.begin(),
                             connection.pending.begin() + static_cast<std::ptrdiff_t>(connection.pending_offset));
    connection.pending_offset = 0;
  }
  return true;
}

bool Receiver::RoomFor(size_t size) {
  if (!stopped_.empty()) return false;
  if (keep_free_ == 0) return true;
  // Read the free space again once half the last margin was written, or a
  // second passed: the command may be filling the disk faster than we do.
  const auto now = std::chrono::steady_clock::now();
  if (written_total_ + size <= next_free_check_ && now < next_free_check_time_) return true;
  struct statvfs filesystem {};
  if (statvfs(trace_dir_.c_str(), &filesystem) != 0) return true;  // Unknown: a real ENOSPC is still handled.
  const uint64_t free = static_cast<uint64_t>(filesystem.f_bavail) * filesystem.f_frsize;
  if (free > keep_free_ && free - keep_free_ >= size) {
    next_free_check_ =
        written_total_ +
        std::min<uint64_t>(std::max<uint64_t>(64 * 1024, (free - keep_free_ - size) / 2), uint64_t{256} << 20);
    next_free_check_time_ = now + std::chrono::seconds(1);
    return true;
  }
  stopped_ =
      absl::StrFormat("stopped at %s of trace: its filesystem had %s free, and --keep-free keeps %s free",
                      report::FormatBytes(written_total_), report::FormatBytes(free), report::FormatBytes(keep_free_));
  std::cerr << log_prefix_ << ": trace recording " << stopped_
            << "; the command runs on, and the report covers what was recorded\n";
  return false;
}

void Receiver::WriteFrame(Connection& connection, const wire::Frame& verified, const uint8_t* frame, size_t size) {
  if (!compress_) {
    WriteToFile(connection, frame, size, size);
    return;
  }
  if (!connection.write_error.empty()) {
    connection.lost_bytes += size;
    return;
  }
  if (connection.block.empty()) connection.block_started = std::chrono::steady_clock::now();
  AppendFrameToBlock(verified, frame, size, connection.block, shuffle_scratch_);
  // The Hello goes out in a block of its own at once: the file is a
  // readable trace from its first moment.
  if (!connection.hello_written || connection.block.size() >= kBlockTargetStreamBytes) FlushBlock(connection);
}

void Receiver::FlushBlock(Connection& connection) {
  if (connection.block.empty()) return;
  compressed_.clear();
  if (absl::Status compressed = compressor_.AppendBlock(connection.block.data(), connection.block.size(), compressed_);
      !compressed.ok()) {
    if (connection.write_error.empty()) connection.write_error = std::string(compressed.message());
    connection.lost_bytes += connection.block.size();
  } else {
    WriteToFile(connection, compressed_.data(), compressed_.size(), connection.block.size());
  }
  connection.block.clear();
}

void Receiver::FlushAgedBlocks() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& connection : connections_) {
    if (!connection->block.empty() && now - connection->block_started >= kBlockMaxAge) FlushBlock(*connection);
  }
}

void Receiver::WriteToFile(Connection& connection, const uint8_t* data, size_t size, size_t stream_bytes) {
  // The first frame (the Hello, small) is always written: a trace file
  // without it would not be readable at all.
  if (connection.write_error.empty() && connection.hello_written && !RoomFor(size)) {
    connection.write_error = stopped_;
  }
  if (connection.write_error.empty()) {
    if (WriteAll(connection.trace_fd, data, size)) {
      connection.written_bytes += size;
      connection.written_stream_bytes += stream_bytes;
      written_total_ += size;
      connection.hello_written = true;
      return;
    }
    // Cut the partial frame (or block) off, so the file stays a clean
    // sequence of whole ones. A file size limit gives EFBIG here only
    // because SIGXFSZ is ignored (IgnoreFileSizeSignal, launcher.h).
    connection.write_error = strerror(errno);
    if (ftruncate(connection.trace_fd, static_cast<off_t>(connection.written_bytes)) != 0) {
      connection.write_error += absl::StrFormat(" (and cutting it back failed: %s)", strerror(errno));
    }
  }
  connection.lost_bytes += stream_bytes;
}

void Receiver::CountBatch(const wire::Frame& frame) {
  const wire::Batch* batch = frame.message_as_Batch();
  if (batch == nullptr) return;
  if (const auto* threads = batch->threads(); threads != nullptr) {
    for (const wire::ThreadEvents* thread : *threads) {
      if (thread == nullptr) continue;
      if (thread->events() != nullptr) stats_.events += thread->events()->size();
      stats_.dropped += thread->dropped();
    }
  }
  if (batch->gpu_activities() != nullptr) stats_.events += batch->gpu_activities()->size();
  stats_.dropped += batch->gpu_dropped();
}

bool Receiver::OpenTraceFile(Connection& connection, int pid) {
  // exec() keeps the pid, so one pid may stream more than once: <pid>.rlt,
  // then <pid>.1.rlt, ...
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string path = attempt == 0
                                 ? absl::StrFormat("%s/%d%s", trace_dir_, pid, run_layout::kTraceExtension)
                                 : absl::StrFormat("%s/%d.%d%s", trace_dir_, pid, attempt, run_layout::kTraceExtension);
    // Exclusive and private (0600): traces hold every process's argv; a
    // link at the name is never followed.
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      problems_.push_back(
          absl::StrFormat("cannot create %s: %s; process %d is not recorded", path, strerror(errno), pid));
      return false;
    }
    connection.trace_fd = fd;
    connection.trace_path = path;
    if (compress_) {
      std::vector<uint8_t> header;
      AppendTraceFileHeader(header);
      if (!WriteAll(fd, header.data(), header.size())) {
        problems_.push_back(
            absl::StrFormat("cannot write %s: %s; process %d is not recorded", path, strerror(errno), pid));
        close(fd);
        unlink(path.c_str());
        connection.trace_fd = -1;
        return false;
      }
      connection.written_bytes = header.size();
      written_total_ += header.size();
    }
    return true;
  }
  problems_.push_back(absl::StrFormat("too many streams from pid %d", pid));
  return false;
}

void Receiver::Finish(Connection& connection) {
  FlushBlock(connection);  // The stream ended (or is given up): its last frames go to disk now.
  if (connection.pending.size() > connection.pending_offset && connection.pid != 0) {
    // A process killed mid-frame: its complete frames are on disk already.
    problems_.push_back(absl::StrFormat("process %d ended in the middle of a frame (%d bytes discarded)",
                                        connection.pid, connection.pending.size() - connection.pending_offset));
  }
  if (!connection.write_error.empty()) {
    problems_.push_back(absl::StrFormat(
        "cannot write %s: %s; it holds the first %d bytes of process %d's stream (readable), the last %d bytes "
        "received were lost",
        connection.trace_path, connection.write_error, connection.written_stream_bytes, connection.pid,
        connection.lost_bytes));
  }
  if (connection.trace_fd >= 0) close(connection.trace_fd);
  connection.trace_fd = -1;
  if (connection.fd >= 0) close(connection.fd);
  connection.fd = -1;
}

void Receiver::CloseAll() {
  for (auto& connection : connections_) Finish(*connection);
  connections_.clear();
}

}  // namespace rlscope::collector
