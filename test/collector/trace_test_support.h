// What the trace reader's, the trace blocks' and the run decoding's tests
// need: a scratch path, a frame appended to a byte stream, the sample
// process's identity and stream, a stream in compressed blocks, and bytes
// written to a file.
#ifndef RLSCOPE_TEST_COLLECTOR_TRACE_TEST_SUPPORT_H_
#define RLSCOPE_TEST_COLLECTOR_TRACE_TEST_SUPPORT_H_

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "format/trace_blocks.h"
#include "format/trace_reader.h"
#include "preload/batch_encoder.h"

namespace rlscope::trace_test {

inline std::string TempPath(const std::string& prefix, const std::string& name) {
  return "/tmp/" + prefix + "_" + std::to_string(getpid()) + "_" + name;
}

inline void Append(std::vector<uint8_t>& stream, preload::BatchEncoder::Frame frame) {
  stream.insert(stream.end(), frame.begin(), frame.end());
}

// The sample stream's process: python3 train.py, pid 4242, started at 1000 ns.
inline preload::ProcessIdentity SampleIdentity() {
  preload::ProcessIdentity identity;
  identity.pid = 4242;
  identity.ppid = 1;
  identity.start_ns = 1000;
  identity.argv = {"python3", "train.py"};
  identity.executable = "/usr/bin/python3";
  return identity;
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The frames of a stream: Hello, `batches` batches of 100 events each,
// Goodbye; each frame's bytes on their own.
inline std::vector<std::vector<uint8_t>> SampleFrames(int batches) {
  std::vector<std::vector<uint8_t>> frames;
  preload::BatchEncoder encoder;
  const preload::ProcessIdentity identity = SampleIdentity();
  frames.emplace_back();
  Append(frames.back(), encoder.EncodeHello(identity, "tsc"));
  for (int b = 0; b < batches; ++b) {
    encoder.BeginBatch(static_cast<uint64_t>(b + 1), 0);
    if (b == 0) encoder.AddString(0, "cudaLaunchKernel");
    encoder.AddThreadEvents(11, 1, 100, 0, {}, [b](wire::Event* out) {
      for (int i = 0; i < 100; ++i) {
        const int64_t begin = 10000 + int64_t{b} * 100000 + i * 1000;
        out[i] = wire::Event(begin, begin + 300 + i, 0, static_cast<uint16_t>(wire::EventKind::kCudaApi), 0, 0);
      }
      // Any 64-bit values come back (kNativeStackFrames keeps addresses
      // in the timestamps): the deltas wrap around.
      if (b == 1) {
        out[97] = wire::Event(INT64_MIN, INT64_MAX, 0, 13, 0, 0);
        out[98] = wire::Event(INT64_MAX, INT64_MIN, 0, 13, 0, 0);
        out[99] = wire::Event(-1, 0x7fff12345678, 0, 13, 0, 0);
      }
    });
    frames.emplace_back();
    Append(frames.back(), encoder.FinishBatch());
  }
  frames.emplace_back();
  Append(frames.back(), encoder.EncodeGoodbye(2000, 100 * batches, 0, "exit"));
  return frames;
}

// As the collector writes it: the header, the Hello in a block of its
// own, then the rest in blocks of `per_block` frames.
inline std::vector<uint8_t> Compressed(const std::vector<std::vector<uint8_t>>& frames, size_t per_block,
                                       std::vector<size_t>* block_offsets = nullptr,
                                       uint16_t version = collector::kTraceBlocksVersion) {
  std::vector<uint8_t> file;
  collector::AppendTraceFileHeader(file, version);
  collector::BlockCompressor compressor;
  std::vector<uint8_t> scratch;
  for (size_t begin = 0; begin < frames.size();) {
    const size_t end = begin == 0 ? 1 : std::min(frames.size(), begin + per_block);
    std::vector<uint8_t> stream;
    for (size_t i = begin; i < end; ++i) {
      absl::StatusOr<const wire::Frame*> verified = collector::VerifyFrame(frames[i].data(), frames[i].size());
      REQUIRE(verified.ok());
      collector::AppendFrameToBlock(**verified, frames[i].data(), frames[i].size(), stream, scratch, version);
    }
    if (block_offsets != nullptr) block_offsets->push_back(file.size());
    REQUIRE(compressor.AppendBlock(stream.data(), stream.size(), file).ok());
    begin = end;
  }
  return file;
}

}  // namespace rlscope::trace_test

#endif  // RLSCOPE_TEST_COLLECTOR_TRACE_TEST_SUPPORT_H_
