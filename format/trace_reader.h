// TraceReader: reads one trace file (trace/<pid>.rlt: the stream of
// wire_format.h, in zstd blocks (trace_blocks.h) or, as rlscope wrote it
// before blocks and does with --uncompressed-trace, verbatim) frame by
// frame, checking each frame with the FlatBuffers verifier. Reading stops at
// the first bad frame or block; every frame before it is delivered, and the
// problem is reported with the file and byte offset (for a frame inside a
// block: its offset in the stream and the block's in the file).
#ifndef RLSCOPE_COLLECTOR_TRACE_READER_H_
#define RLSCOPE_COLLECTOR_TRACE_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/wire_format.h"

namespace rlscope::collector {

// VerifyFrame: the frame at `data` (starting with its length prefix; `size`
// includes the prefix), or an error
// saying what is wrong with it. Checks the identifier, the FlatBuffers
// structure, and that the Hello's protocol version is one we read.
absl::StatusOr<const wire::Frame*> VerifyFrame(const uint8_t* data, size_t size);

// Called for each valid frame with its byte offset in the stream (in the
// file, for a plain trace).
using FrameVisitor = std::function<void(const wire::Frame& frame, uint64_t offset)>;

struct TraceReadResult {
  uint64_t frames = 0;
  uint64_t bytes = 0;
  // Set when the file is damaged: "<path>: <what> at byte offset N ...".
  // The frames before the damage were delivered.
  std::optional<std::string> damage;
};

// ReadTraceFile: returns an error only when the file cannot be read at all
// (not a regular file: a FIFO never blocks it) or is not a trace (no valid
// Hello first); damage later in the file, and a file that shrinks while it
// is read, are reported in the result. Reads with pread, never a mapping.
absl::StatusOr<TraceReadResult> ReadTraceFile(const std::string& path, const FrameVisitor& visit);

// ReadTraceBuffer: the same for a trace already in memory (`source` names
// it in messages): the same loop ReadTraceFile runs over the file's
// window, and what the fuzzer (test/fuzz/) drives.
absl::StatusOr<TraceReadResult> ReadTraceBuffer(const uint8_t* data, size_t size, const std::string& source,
                                                const FrameVisitor& visit);

// TraceFollower: reads a compressed trace file while the collector is
// still writing it (the report analysing as the run goes), block by block:
// the collector appends whole blocks with plain write()s, so a block not
// yet whole is one still being written, not damage, until Finish. Frames
// are delivered to `visit` in the order ReadTraceFile would deliver them,
// and Finish returns what it would have returned for the whole file.
class TraceFollower {
 public:
  TraceFollower(std::string path, FrameVisitor visit);
  ~TraceFollower();
  TraceFollower(const TraceFollower&) = delete;
  TraceFollower& operator=(const TraceFollower&) = delete;

  // ReadNew: delivers the frames of the whole blocks written since the
  // last call. A plain trace (--uncompressed-trace) is not followed, and
  // following stops at damage (what comes after it is never read).
  void ReadNew();
  // Finish: once the file is complete, reads the rest as ReadTraceFile
  // would (what is cut short now is damage: the writer is done) and
  // returns its result; a file not followed is read whole now.
  absl::StatusOr<TraceReadResult> Finish();
  // The stream bytes delivered so far.
  uint64_t stream_bytes() const;

 private:
  struct State;
  std::string path_;
  FrameVisitor visit_;
  std::unique_ptr<State> state_;
  enum class Mode { kUnknown, kBlocks, kWhole };
  Mode mode_ = Mode::kUnknown;
  bool scan_stopped_ = false;
};

// TraceStreamBytes: how many bytes of stream the trace file at `path`
// holds: its size for a plain trace, the sum of its blocks' stream sizes
// (headers only, nothing decompressed) for a compressed one, up to any
// damage. What the analysis's memory grows with; 0 when unreadable.
uint64_t TraceStreamBytes(const std::string& path);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_TRACE_READER_H_
