// Receiver: the collector's end of the event streams. Listens on a Unix
// socket; each traced process connects once and streams frames
// (wire_format.h). Every complete frame is verified and appended to
// trace/<pid>.rlt, in zstd blocks of whole frames (format/trace_blocks.h),
// or verbatim (WriteUncompressed: the format before blocks), so the file
// holds exactly the stream received. A block is written when it holds
// kBlockTargetStreamBytes, when the stream ends, and at the latest
// kBlockMaxAge after its first frame came (FlushAgedBlocks): a collector
// killed mid-run loses at most that much; the file is written unbuffered
// (plain write()), so everything written survives a SIGKILL, and a write
// error (disk full) leaves the blocks before it.
//
// Single-threaded: the owner polls the descriptors from PollFds() together
// with its own (child exit, signals) and calls OnPollResult.
#ifndef RLSCOPE_COLLECTOR_RECEIVER_H_
#define RLSCOPE_COLLECTOR_RECEIVER_H_

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "format/trace_blocks.h"

namespace rlscope::wire {
struct Frame;
}  // namespace rlscope::wire

namespace rlscope::collector {

struct ReceiverStats {
  uint64_t connections = 0;
  uint64_t frames = 0;
  uint64_t bytes = 0;
  // From the Batch frames' vector lengths and counters (no extra parse:
  // the frame is verified anyway): CPU events plus GPU activity records,
  // and what the processes reported they could not record (ThreadEvents
  // .dropped plus Batch.gpu_dropped). Both only grow as batches arrive, so
  // a process's drops show once its next batch is flushed.
  uint64_t events = 0;
  uint64_t dropped = 0;
};

class Receiver {
 public:
  // Listen: binds `socket_path` (must not exist) and writes traces into
  // `trace_dir` (must exist). "@name" is a Linux abstract socket: no file,
  // so nothing is left behind when the collector is killed; it lives in
  // the network namespace, so a process that moved to another one (unshare
  // -n, some sandboxes) cannot reach it, and since it has no file
  // permissions, connections from other users are refused (SO_PEERCRED).
  static absl::StatusOr<std::unique_ptr<Receiver>> Listen(const std::string& socket_path, const std::string& trace_dir);
  ~Receiver();

  // Appends the listening socket and every open connection.
  void AppendPollFds(std::vector<pollfd>& fds) const;
  // Handles whatever `fds` (as filled by AppendPollFds, then polled) reports.
  void OnPollResult(const pollfd* fds, size_t count);
  // CloseAll: stop waiting for streams that are still open (grace period
  // over); what they sent so far stays in their trace files.
  void CloseAll();

  // KeepFree: stop writing trace data once the trace directory's
  // filesystem would have less than `bytes` free (0: write until full).
  // Frames that arrive afterwards are counted as lost, per process, and
  // the first stop is said on stderr with `log_prefix`.
  void KeepFree(uint64_t bytes, std::string log_prefix) {
    keep_free_ = bytes;
    log_prefix_ = std::move(log_prefix);
  }

  // WriteUncompressed: write the streams verbatim, as rlscope did before
  // compressed blocks (`rlscope run --uncompressed-trace`). Before any
  // connection.
  void WriteUncompressed() { compress_ = false; }

  // FlushAgedBlocks: writes every block whose first frame came at least
  // kBlockMaxAge ago. The owner calls it at least every 100 ms.
  void FlushAgedBlocks();
  static constexpr std::chrono::milliseconds kBlockMaxAge{200};

  size_t open_connections() const { return connections_.size(); }
  const ReceiverStats& stats() const { return stats_; }
  // Problems worth telling the user (protocol errors, write failures).
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  struct Connection;
  Receiver(int listen_fd, std::string socket_path, std::string trace_dir);
  void Accept();
  // Reads what is available; false when the connection is finished.
  bool Read(Connection& connection);
  bool ConsumeFrames(Connection& connection);
  bool OpenTraceFile(Connection& connection, int pid);
  // WriteFrame: appends one frame (`verified` is the frame at `frame`) to
  // the connection's trace file, or to its block; after a write error,
  // counts it as lost instead.
  void WriteFrame(Connection& connection, const wire::Frame& verified, const uint8_t* frame, size_t size);
  // FlushBlock: compresses and writes the connection's block, if any.
  void FlushBlock(Connection& connection);
  // WriteToFile: appends `size` bytes (a frame or a block, holding
  // `stream_bytes` of the stream) to the trace file; after a write error,
  // or once KeepFree stopped writing, counts them as lost instead.
  void WriteToFile(Connection& connection, const uint8_t* data, size_t size, size_t stream_bytes);
  void CountBatch(const wire::Frame& frame);
  // RoomFor: whether `size` more bytes of trace leave the free space
  // KeepFree asks for (statvfs once half the last reading's margin is used
  // up, at most 256 MiB, or a second passed); sets stopped_ when not.
  bool RoomFor(size_t size);
  void Finish(Connection& connection);

  int listen_fd_;
  std::string socket_path_;
  std::string trace_dir_;
  uint64_t keep_free_ = 0;
  std::string log_prefix_;
  bool compress_ = true;
  BlockCompressor compressor_;
  std::vector<uint8_t> compressed_;                             // The block being written (reused).
  std::vector<uint8_t> shuffle_scratch_;                        // AppendFrameToBlock's (reused).
  uint64_t written_total_ = 0;                                  // Trace bytes written (compressed), all connections.
  uint64_t next_free_check_ = 0;                                // written_total_ at which to read the free space again,
  std::chrono::steady_clock::time_point next_free_check_time_;  // or at this time, whichever comes first.
  std::string stopped_;                                         // Why trace writing stopped (KeepFree), once it did.
  bool refused_peer_ = false;                                   // Said once in problems_.
  std::vector<std::unique_ptr<Connection>> connections_;
  ReceiverStats stats_;
  std::vector<std::string> problems_;
};

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_RECEIVER_H_
