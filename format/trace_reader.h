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

// TraceStreamBytes: how many bytes of stream the trace file at `path`
// holds: its size for a plain trace, the sum of its blocks' stream sizes
// (headers only, nothing decompressed) for a compressed one, up to any
// damage. What the analysis's memory grows with; 0 when unreadable.
uint64_t TraceStreamBytes(const std::string& path);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_TRACE_READER_H_
