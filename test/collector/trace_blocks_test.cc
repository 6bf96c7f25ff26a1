// Compressed traces (format/trace_blocks.h): blocks of frames written as
// the collector writes them read back as the same frames as the plain
// stream, the plain stream (the format before blocks) and blocks of the
// version before shuffled events are still read, and a
// damaged block stops reading there, saying where.
#include "format/trace_blocks.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "format/trace_reader.h"
#include "preload/batch_encoder.h"
#include "test/collector/trace_test_support.h"

using rlscope::collector::AppendFrameToBlock;
using rlscope::collector::AppendTraceFileHeader;
using rlscope::collector::BlockCompressor;
using rlscope::collector::kBlockHeaderBytes;
using rlscope::collector::kTraceFileHeaderBytes;
using rlscope::collector::ReadTraceBuffer;
using rlscope::collector::ReadTraceFile;
using rlscope::collector::TraceReadResult;
using rlscope::collector::TraceStreamBytes;
using rlscope::collector::VerifyFrame;
using rlscope::preload::BatchEncoder;
using rlscope::preload::ProcessIdentity;
namespace wire = rlscope::wire;

namespace {

std::string TempPath(const std::string& name) { return rlscope::trace_test::TempPath("rlscope_blocks_test", name); }

using rlscope::trace_test::Append;
using rlscope::trace_test::Compressed;
using rlscope::trace_test::SampleFrames;
using rlscope::trace_test::WriteFile;

// A Batch frame whose two ThreadEvents (tids 11 and 12) share events, as
// a hostile trace may (the verifier allows it): with `partly`, thread 12's
// vector is the last three events of thread 11's four, its length prefix
// the high half of the first event's payload; else both name one vector.
std::vector<uint8_t> SharedEventsFrame(bool partly) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<wire::Event> events;
  for (int64_t i = 0; i < 4; ++i) {
    events.emplace_back(5000 + i * 1000, 5300 + i * 1000 + i, 0, static_cast<uint16_t>(wire::EventKind::kCudaApi), 0,
                        i == 0 ? uint64_t{3} << 32 : 0);
  }
  const auto shared = builder.CreateVectorOfStructs(events);
  const std::vector<flatbuffers::Offset<wire::ThreadEvents>> threads = {wire::CreateThreadEvents(builder, 11, shared),
                                                                        wire::CreateThreadEvents(builder, 12, shared)};
  const auto batch = wire::CreateBatch(builder, 1, 0, 0, builder.CreateVector(threads));
  builder.FinishSizePrefixed(wire::CreateFrame(builder, wire::Message::Batch, batch.Union()), wire::FrameIdentifier());
  std::vector<uint8_t> frame(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  if (partly) {
    const wire::Batch* verified = (*VerifyFrame(frame.data(), frame.size()))->message_as_Batch();
    const auto* second = reinterpret_cast<const flatbuffers::Table*>(verified->threads()->Get(1));
    const uint8_t* field = second->GetAddressOf(wire::ThreadEvents::VT_EVENTS);
    const uint8_t* prefix = reinterpret_cast<const uint8_t*>(verified->threads()->Get(0)->events()->Data()) +
                            sizeof(wire::Event) - sizeof(uint32_t);
    const auto offset = static_cast<uint32_t>(prefix - field);
    memcpy(frame.data() + (field - frame.data()), &offset, sizeof(offset));
  }
  return frame;
}

std::vector<uint8_t> Concatenated(const std::vector<std::vector<uint8_t>>& frames, size_t begin, size_t end) {
  std::vector<uint8_t> bytes;
  for (size_t i = begin; i < end; ++i) bytes.insert(bytes.end(), frames[i].begin(), frames[i].end());
  return bytes;
}

struct Collected {
  std::vector<wire::Message> kinds;
  std::vector<uint64_t> offsets;
  std::vector<int64_t> begins;
  std::vector<int64_t> ends;
};

// CollectInto: a visitor that adds each frame to `collected`.
rlscope::collector::FrameVisitor CollectInto(Collected& collected) {
  return [&collected](const wire::Frame& frame, uint64_t offset) {
    collected.kinds.push_back(frame.message_type());
    collected.offsets.push_back(offset);
    if (const wire::Batch* batch = frame.message_as_Batch()) {
      for (const wire::Event* event : *batch->threads()->Get(0)->events()) {
        collected.begins.push_back(event->begin_ns());
        collected.ends.push_back(event->end_ns());
      }
    }
  };
}

absl::StatusOr<TraceReadResult> Read(const std::vector<uint8_t>& bytes, Collected& collected) {
  const std::string path = TempPath("trace.rlt");
  WriteFile(path, bytes);
  absl::StatusOr<TraceReadResult> result = ReadTraceFile(path, CollectInto(collected));
  unlink(path.c_str());
  return result;
}

}  // namespace

TEST_CASE("A compressed trace reads back as the same frames as the plain stream", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(50);
  const std::vector<uint8_t> plain = Concatenated(frames, 0, frames.size());
  const std::vector<uint8_t> compressed = Compressed(frames, 16);
  CHECK(compressed.size() * 3 < plain.size());
  Collected from_plain, from_compressed;
  absl::StatusOr<TraceReadResult> plain_result = Read(plain, from_plain);
  absl::StatusOr<TraceReadResult> compressed_result = Read(compressed, from_compressed);
  REQUIRE(plain_result.ok());
  INFO(compressed_result.status().ToString());
  REQUIRE(compressed_result.ok());
  CHECK_FALSE(compressed_result->damage);
  CHECK(compressed_result->frames == frames.size());
  CHECK(from_compressed.kinds == from_plain.kinds);
  // Offsets are the frames' offsets in the stream, whichever the format.
  CHECK(from_compressed.offsets == from_plain.offsets);
  CHECK(from_compressed.begins == from_plain.begins);
  CHECK(from_compressed.ends == from_plain.ends);
  CHECK(from_plain.begins[197] == INT64_MIN);
  CHECK(from_plain.ends[199] == 0x7fff12345678);
  CHECK(from_compressed.begins.size() == 5000);
}

TEST_CASE("Events that two threads of a frame share are decoded once", "[blocks]") {
  const bool partly = GENERATE(false, true);
  INFO((partly ? "one vector inside another" : "one vector named twice"));
  BatchEncoder encoder;
  std::vector<std::vector<uint8_t>> frames(1);
  Append(frames[0], encoder.EncodeHello(rlscope::trace_test::SampleIdentity(), "tsc"));
  frames.push_back(SharedEventsFrame(partly));
  REQUIRE(VerifyFrame(frames[1].data(), frames[1].size()).ok());
  const std::string path = TempPath("shared.rlt");
  WriteFile(path, Compressed(frames, 4));
  std::vector<std::vector<std::pair<int64_t, int64_t>>> times;
  absl::StatusOr<TraceReadResult> result = ReadTraceFile(path, [&](const wire::Frame& frame, uint64_t) {
    if (const wire::Batch* batch = frame.message_as_Batch()) {
      for (const wire::ThreadEvents* thread : *batch->threads()) {
        times.emplace_back();
        for (const wire::Event* event : *thread->events())
          times.back().emplace_back(event->begin_ns(), event->end_ns());
      }
    }
  });
  unlink(path.c_str());
  REQUIRE(result.ok());
  CHECK_FALSE(result->damage);
  const std::vector<std::pair<int64_t, int64_t>> all = {{5000, 5300}, {6000, 6301}, {7000, 7302}, {8000, 8303}};
  REQUIRE(times.size() == 2);
  CHECK(times[0] == all);
  CHECK(times[1] == (partly ? std::vector(all.begin() + 1, all.end()) : all));
}

TEST_CASE("A trace's stream size is read from its block headers", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(30);
  const std::vector<uint8_t> plain = Concatenated(frames, 0, frames.size());
  const std::vector<uint8_t> compressed = Compressed(frames, 8);
  const std::string path = TempPath("size.rlt");
  WriteFile(path, compressed);
  CHECK(TraceStreamBytes(path) == plain.size());
  WriteFile(path, plain);
  CHECK(TraceStreamBytes(path) == plain.size());
  unlink(path.c_str());
}

TEST_CASE("A compressed trace of the version before shuffled events is still read", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(20);
  Collected from_plain, from_old, from_new;
  REQUIRE(Read(Concatenated(frames, 0, frames.size()), from_plain).ok());
  const std::vector<uint8_t> old_file = Compressed(frames, 8, nullptr, /*version=*/1);
  const std::vector<uint8_t> new_file = Compressed(frames, 8);
  // The versions differ in their bytes, not in what they hold.
  CHECK(old_file != new_file);
  CHECK(old_file[4] == 1);
  CHECK(new_file[4] == rlscope::collector::kTraceBlocksVersion);
  absl::StatusOr<TraceReadResult> old_result = Read(old_file, from_old);
  absl::StatusOr<TraceReadResult> new_result = Read(new_file, from_new);
  REQUIRE(old_result.ok());
  REQUIRE(new_result.ok());
  CHECK_FALSE(old_result->damage);
  CHECK(from_old.begins == from_plain.begins);
  CHECK(from_old.ends == from_plain.ends);
  CHECK(from_new.begins == from_plain.begins);
  CHECK(from_new.ends == from_plain.ends);
}

TEST_CASE("A plain stream, the format before compressed blocks, is still read", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(3);
  Collected collected;
  absl::StatusOr<TraceReadResult> result = Read(Concatenated(frames, 0, frames.size()), collected);
  REQUIRE(result.ok());
  CHECK_FALSE(result->damage);
  CHECK(collected.kinds.size() == frames.size());
  CHECK(collected.begins.size() == 300);
}

TEST_CASE("A damaged compressed block stops reading there and names its offset", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(40);
  std::vector<size_t> blocks;
  const std::vector<uint8_t> good = Compressed(frames, 10, &blocks);
  REQUIRE(blocks.size() == 6);  // Hello, then 40 batches and the Goodbye in 10s.
  const size_t third = blocks[2];
  SECTION("a flipped byte inside the block's data") {
    std::vector<uint8_t> bad = good;
    bad[third + kBlockHeaderBytes + (blocks[3] - third - kBlockHeaderBytes) / 2] ^= 0x10;
    Collected collected;
    absl::StatusOr<TraceReadResult> result = Read(bad, collected);
    REQUIRE(result.ok());
    REQUIRE(result->damage);
    CHECK_THAT(*result->damage, Catch::Contains("damaged compressed block"));
    CHECK_THAT(*result->damage, Catch::Contains("at byte offset " + std::to_string(third) + " (of the file)"));
    CHECK(collected.kinds.size() == 11);  // The Hello and the second block's 10 batches.
  }
  SECTION("a block cut short") {
    const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(third + 20));
    Collected collected;
    absl::StatusOr<TraceReadResult> result = Read(cut, collected);
    REQUIRE(result.ok());
    REQUIRE(result->damage);
    CHECK_THAT(*result->damage, Catch::Contains("truncated block"));
    CHECK(collected.kinds.size() == 11);
  }
  SECTION("a block header that says too much") {
    std::vector<uint8_t> bad = good;
    bad[third + 3] = 0x7f;  // The compressed size, beyond any block.
    Collected collected;
    absl::StatusOr<TraceReadResult> result = Read(bad, collected);
    REQUIRE(result.ok());
    REQUIRE(result->damage);
    CHECK_THAT(*result->damage, Catch::Contains("at byte offset " + std::to_string(third)));
  }
  SECTION("a file cut at a block boundary is whole") {
    const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(third));
    Collected collected;
    absl::StatusOr<TraceReadResult> result = Read(cut, collected);
    REQUIRE(result.ok());
    CHECK_FALSE(result->damage);
    CHECK(collected.kinds.size() == 11);
  }
}

TEST_CASE("A compressed trace of a newer version, or without its Hello block, is not read", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(2);
  std::vector<uint8_t> newer = Compressed(frames, 4);
  newer[4] = 99;
  Collected collected;
  absl::StatusOr<TraceReadResult> result = Read(newer, collected);
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(std::string(result.status().message()), Catch::Contains("upgrade rlscope"));
  std::vector<uint8_t> header_only;
  AppendTraceFileHeader(header_only);
  REQUIRE(header_only.size() == kTraceFileHeaderBytes);
  header_only.resize(6);
  result = ReadTraceBuffer(header_only.data(), header_only.size(), "x.rlt", [](const wire::Frame&, uint64_t) {});
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(std::string(result.status().message()), Catch::Contains("x.rlt: not a readable rlscope trace"));
}

namespace {

// Follow: `bytes` written to a file in the pieces `cuts` ends (each a
// prefix length), the follower reading after each; then Finish. Returns
// Finish's result; `after_each` the frames delivered after each piece.
absl::StatusOr<TraceReadResult> Follow(const std::vector<uint8_t>& bytes, const std::vector<size_t>& cuts,
                                       Collected& collected, std::vector<size_t>* after_each = nullptr) {
  const std::string path = TempPath("trace.rlt");  // Read's, so that messages compare.
  rlscope::collector::TraceFollower follower(path, CollectInto(collected));
  follower.ReadNew();  // No file yet.
  for (size_t cut : cuts) {
    WriteFile(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
    follower.ReadNew();
    if (after_each != nullptr) after_each->push_back(collected.kinds.size());
  }
  absl::StatusOr<TraceReadResult> result = follower.Finish();
  unlink(path.c_str());
  return result;
}

}  // namespace

TEST_CASE("A trace followed while it is written reads as the whole file does", "[blocks]") {
  const std::vector<std::vector<uint8_t>> frames = SampleFrames(40);
  std::vector<size_t> blocks;
  const std::vector<uint8_t> file = Compressed(frames, 10, &blocks);
  REQUIRE(blocks.size() == 6);
  Collected whole;
  absl::StatusOr<TraceReadResult> whole_result = Read(file, whole);
  REQUIRE(whole_result.ok());

  SECTION("written in pieces that cut headers and blocks") {
    // Inside the file header, inside block 1's header, inside block 2's
    // data, at block 4's start, then the whole file.
    const std::vector<size_t> cuts = {3, blocks[1] + 5, blocks[2] + kBlockHeaderBytes + 7, blocks[4], file.size()};
    Collected followed;
    std::vector<size_t> after_each;
    absl::StatusOr<TraceReadResult> result = Follow(file, cuts, followed, &after_each);
    REQUIRE(result.ok());
    CHECK_FALSE(result->damage);
    // Only whole blocks are read as the file grows: the Hello, then one
    // block of ten batches, then three.
    CHECK(after_each == std::vector<size_t>{0, 1, 11, 31, frames.size()});
    CHECK(result->frames == whole_result->frames);
    CHECK(result->bytes == whole_result->bytes);
    CHECK(followed.kinds == whole.kinds);
    CHECK(followed.offsets == whole.offsets);
    CHECK(followed.begins == whole.begins);
    CHECK(followed.ends == whole.ends);
  }
  SECTION("a block written in part, then cut back (a failed write), then whole") {
    const std::vector<size_t> cuts = {blocks[3] + 20, blocks[3], file.size()};
    Collected followed;
    std::vector<size_t> after_each;
    absl::StatusOr<TraceReadResult> result = Follow(file, cuts, followed, &after_each);
    REQUIRE(result.ok());
    CHECK_FALSE(result->damage);
    CHECK(after_each == std::vector<size_t>{21, 21, frames.size()});
    CHECK(followed.kinds == whole.kinds);
  }
  SECTION("a block still cut short at the end is damage, as for the whole file") {
    const std::vector<uint8_t> cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(blocks[3] + 20));
    Collected cut_whole, followed;
    absl::StatusOr<TraceReadResult> expected = Read(cut, cut_whole);
    absl::StatusOr<TraceReadResult> result = Follow(cut, {blocks[2], cut.size()}, followed);
    REQUIRE(expected.ok());
    REQUIRE(result.ok());
    REQUIRE(result->damage);
    CHECK(*result->damage == *expected->damage);
    CHECK(followed.kinds == cut_whole.kinds);
  }
  SECTION("a damaged block: what follows it is never read") {
    std::vector<uint8_t> bad = file;
    bad[blocks[2] + kBlockHeaderBytes + (blocks[3] - blocks[2] - kBlockHeaderBytes) / 2] ^= 0x10;
    Collected bad_whole, followed;
    absl::StatusOr<TraceReadResult> expected = Read(bad, bad_whole);
    absl::StatusOr<TraceReadResult> result = Follow(bad, {blocks[3], bad.size()}, followed);
    REQUIRE(result.ok());
    REQUIRE(result->damage);
    CHECK(*result->damage == *expected->damage);
    CHECK(followed.kinds.size() == 11);
  }
  SECTION("a plain stream is read whole at the end") {
    const std::vector<uint8_t> plain = Concatenated(frames, 0, frames.size());
    Collected plain_whole, followed;
    std::vector<size_t> after_each;
    absl::StatusOr<TraceReadResult> expected = Read(plain, plain_whole);
    absl::StatusOr<TraceReadResult> result = Follow(plain, {plain.size() / 2, plain.size()}, followed, &after_each);
    REQUIRE(result.ok());
    CHECK(after_each == std::vector<size_t>{0, 0});
    CHECK(result->frames == expected->frames);
    CHECK(followed.kinds == plain_whole.kinds);
    CHECK(followed.begins == plain_whole.begins);
  }
  SECTION("a file that never appears fails as ReadTraceFile does") {
    Collected followed;
    rlscope::collector::TraceFollower follower(TempPath("never.rlt"), [](const wire::Frame&, uint64_t) {});
    follower.ReadNew();
    absl::StatusOr<TraceReadResult> result = follower.Finish();
    CHECK_FALSE(result.ok());
  }
}
