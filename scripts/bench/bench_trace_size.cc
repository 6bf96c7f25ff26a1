// bench_trace_size: how large a trace is per event, plain and compressed,
// and how fast the collector's compression runs on one core. Reads one
// trace file (either format), cuts its stream into blocks as the collector
// does (kBlockTargetStreamBytes, whole frames), builds each block as the
// receiver does (AppendFrameToBlock) in three layouts: the frames as sent,
// with timestamp deltas (trace blocks version 1), with deltas and shuffled
// events (version 2: what rlscope stores), and compresses them at zstd
// levels -5 to 3 (the negative ones: zstd's fast modes), saying how much of
// the time building the block took.
//   bench_trace_size TRACE.rlt
// Speeds are thread CPU time, best of 3 passes: what one collector core
// spends, not what a busy machine's wall clock shows.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "format/trace_blocks.h"
#include "format/trace_reader.h"

namespace collector = rlscope::collector;
namespace wire = rlscope::wire;

namespace {

double ThreadSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Frames: the plain stream's frames (offset, size with prefix), in order.
struct Stream {
  std::vector<uint8_t> bytes;
  std::vector<std::pair<size_t, size_t>> frames;
  uint64_t events = 0;
};

bool ReadPlainStream(const char* path, Stream& stream) {
  FILE* file = std::fopen(path, "rb");
  if (file == nullptr) return false;
  uint8_t chunk[1 << 16];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;)
    stream.bytes.insert(stream.bytes.end(), chunk, chunk + n);
  std::fclose(file);
  if (collector::HasTraceBlocksMagic(stream.bytes.data(), stream.bytes.size())) {
    std::fprintf(stderr, "%s is compressed: give a trace written with `rlscope run --uncompressed-trace`\n", path);
    return false;
  }
  for (size_t offset = 0; offset + 4 <= stream.bytes.size();) {
    uint32_t length;
    std::memcpy(&length, stream.bytes.data() + offset, 4);
    if (length > wire::kMaxFrameBytes || offset + 4 + length > stream.bytes.size()) break;
    auto frame = collector::VerifyFrame(stream.bytes.data() + offset, 4 + length);
    if (!frame.ok()) break;
    if (const wire::Batch* batch = (*frame)->message_as_Batch()) {
      if (batch->threads() != nullptr) {
        for (const wire::ThreadEvents* thread : *batch->threads()) {
          stream.events += thread->events() != nullptr ? thread->events()->size() : 0;
        }
      }
      if (batch->gpu_activities() != nullptr) stream.events += batch->gpu_activities()->size();
    }
    stream.frames.emplace_back(offset, 4 + length);
    offset += 4 + length;
  }
  return !stream.frames.empty();
}

// Blocks: [begin, end) frame index ranges, cut as the receiver cuts them.
std::vector<std::pair<size_t, size_t>> Blocks(const Stream& stream) {
  std::vector<std::pair<size_t, size_t>> blocks = {{0, 1}};  // The Hello alone.
  size_t begin = 1, bytes = 0;
  for (size_t i = 1; i < stream.frames.size(); ++i) {
    bytes += stream.frames[i].second;
    if (bytes >= collector::kBlockTargetStreamBytes || i + 1 == stream.frames.size()) {
      blocks.emplace_back(begin, i + 1);
      begin = i + 1;
      bytes = 0;
    }
  }
  return blocks;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_trace_size PLAIN_TRACE.rlt\n");
    return 2;
  }
  Stream stream;
  if (!ReadPlainStream(argv[1], stream)) {
    std::fprintf(stderr, "%s: not a readable plain trace\n", argv[1]);
    return 1;
  }
  const auto blocks = Blocks(stream);
  const double events = static_cast<double>(std::max<uint64_t>(stream.events, 1));
  std::printf("%s: %llu events, %zu frames, %zu blocks\n", argv[1], static_cast<unsigned long long>(stream.events),
              stream.frames.size(), blocks.size());
  std::printf("  plain             %10zu bytes  %6.2f bytes/event\n", stream.bytes.size(),
              static_cast<double>(stream.bytes.size()) / events);
  // Block layouts: 0 the frames as sent; 1 timestamp deltas (trace blocks
  // version 1); 2 deltas and shuffled events (version 2, rlscope's now).
  for (int level : {-5, -1, 1, 3}) {
    for (const uint16_t layout : {0, 1, 2}) {
      collector::BlockCompressor compressor(level);
      std::vector<uint8_t> out, block, scratch;
      double best = 1e30, transform_best = 1e30;
      for (int pass = 0; pass < 3; ++pass) {
        // The frames as the receiver holds them: verified (untimed: it
        // verifies every frame, compressed or not).
        std::vector<const wire::Frame*> verified;
        for (const auto& [offset, size] : stream.frames)
          verified.push_back(*collector::VerifyFrame(stream.bytes.data() + offset, size));
        out.clear();
        double transform = 0;
        const double start = ThreadSeconds();
        for (const auto& [first, last] : blocks) {
          // As the receiver builds a block: each frame copied in, then
          // transformed there (AppendFrameToBlock).
          const double copy_start = ThreadSeconds();
          block.clear();
          for (size_t i = first; i < last; ++i) {
            const uint8_t* frame = stream.bytes.data() + stream.frames[i].first;
            if (layout == 0) {
              block.insert(block.end(), frame, frame + stream.frames[i].second);
            } else {
              collector::AppendFrameToBlock(*verified[i], frame, stream.frames[i].second, block, scratch, layout);
            }
          }
          transform += ThreadSeconds() - copy_start;
          if (!compressor.AppendBlock(block.data(), block.size(), out).ok()) return 1;
        }
        best = std::min(best, ThreadSeconds() - start);
        transform_best = std::min(transform_best, transform);
      }
      static const char* const kLayouts[] = {"", " +delta", " +delta+shuffle"};
      std::printf("  zstd %2d%-15s %10zu bytes  %6.2f bytes/event  %7.0f MB/s  (copy and transform %.1f ms of it)\n",
                  level, kLayouts[layout], out.size() + collector::kTraceFileHeaderBytes,
                  static_cast<double>(out.size() + collector::kTraceFileHeaderBytes) / events,
                  static_cast<double>(stream.bytes.size()) / 1e6 / std::max(best, 1e-9), transform_best * 1e3);
    }
  }
  return 0;
}
