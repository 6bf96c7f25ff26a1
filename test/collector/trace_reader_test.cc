// Round trip through the wire format: frames made by the preload's encoder,
// written as the collector writes them, read back by the trace reader; and
// what the reader does with damaged and foreign files.
#include "format/trace_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "preload/batch_encoder.h"
#include "test/collector/trace_test_support.h"

using rlscope::collector::ReadTraceFile;
using rlscope::collector::TraceReadResult;
using rlscope::collector::VerifyFrame;
using rlscope::preload::BatchEncoder;
using rlscope::preload::ProcessIdentity;
namespace wire = rlscope::wire;

namespace {

std::string TempPath(const std::string& name) { return rlscope::trace_test::TempPath("rlscope_test", name); }

using rlscope::trace_test::Append;
using rlscope::trace_test::WriteFile;

// A stream of Hello, one batch (2 strings, 3 events on tid 11), Goodbye.
std::vector<uint8_t> SampleStream() {
  std::vector<uint8_t> stream;
  BatchEncoder encoder;
  const ProcessIdentity identity = rlscope::trace_test::SampleIdentity();
  Append(stream, encoder.EncodeHello(identity, "tsc"));
  encoder.BeginBatch(1, 0);
  encoder.AddString(0, "cudaLaunchKernel");
  encoder.AddString(1, "inference");
  encoder.AddThreadInfo(11, 1, "main");
  encoder.AddThreadEvents(11, 1, 3, 0, {}, [](wire::Event* out) {
    out[0] = wire::Event(1100, 1100, 1, static_cast<uint16_t>(wire::EventKind::kOperationPush), 1, 0);
    out[1] = wire::Event(1200, 1300, 0, static_cast<uint16_t>(wire::EventKind::kCudaApi), 0, 0);
    out[2] = wire::Event(1400, 1400, 0, static_cast<uint16_t>(wire::EventKind::kOperationPop), 0, 0);
  });
  Append(stream, encoder.FinishBatch());
  Append(stream, encoder.EncodeGoodbye(2000, 3, 0, "exit"));
  return stream;
}

struct Collected {
  std::vector<wire::Message> kinds;
  std::vector<uint64_t> offsets;
};

absl::StatusOr<TraceReadResult> Read(const std::string& path, Collected& collected) {
  return ReadTraceFile(path, [&](const wire::Frame& frame, uint64_t offset) {
    collected.kinds.push_back(frame.message_type());
    collected.offsets.push_back(offset);
  });
}

}  // namespace

TEST_CASE("Encoded frames read back with every field intact", "[wire]") {
  const std::string path = TempPath("roundtrip.rlt");
  WriteFile(path, SampleStream());
  int events = 0;
  absl::StatusOr<TraceReadResult> result = ReadTraceFile(path, [&](const wire::Frame& frame, uint64_t) {
    if (const wire::Hello* hello = frame.message_as_Hello()) {
      CHECK(hello->pid() == 4242);
      CHECK(hello->protocol_version() == wire::kProtocolVersion);
      CHECK(hello->argv()->size() == 2);
      CHECK(hello->argv()->Get(1)->str() == "train.py");
      CHECK(hello->clock_source()->str() == "tsc");
    } else if (const wire::Batch* batch = frame.message_as_Batch()) {
      CHECK(batch->strings()->Get(1)->text()->str() == "inference");
      CHECK(batch->thread_infos()->Get(0)->name()->str() == "main");
      const wire::ThreadEvents* thread = batch->threads()->Get(0);
      CHECK(thread->tid() == 11);
      const wire::Event* api = thread->events()->Get(1);
      CHECK(api->begin_ns() == 1200);
      CHECK(api->end_ns() == 1300);
      CHECK(api->kind() == static_cast<uint16_t>(wire::EventKind::kCudaApi));
      events += static_cast<int>(thread->events()->size());
    } else if (const wire::Goodbye* goodbye = frame.message_as_Goodbye()) {
      CHECK(goodbye->end_ns() == 2000);
      CHECK(goodbye->reason()->str() == "exit");
    }
  });
  REQUIRE(result.ok());
  CHECK(result->frames == 3);
  CHECK_FALSE(result->damage.has_value());
  CHECK(events == 3);
  std::remove(path.c_str());
}

TEST_CASE("A trace cut at any byte keeps every complete frame and names the offset", "[wire]") {
  const std::vector<uint8_t> stream = SampleStream();
  Collected full;
  const std::string path = TempPath("cut.rlt");
  WriteFile(path, stream);
  REQUIRE(Read(path, full).ok());
  REQUIRE(full.offsets.size() == 3);
  // Cut inside the batch and inside the goodbye, including inside headers.
  for (size_t cut = full.offsets[1] + 1; cut < stream.size(); cut += 7) {
    WriteFile(path, std::vector<uint8_t>(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(cut)));
    Collected collected;
    absl::StatusOr<TraceReadResult> result = Read(path, collected);
    REQUIRE(result.ok());
    const size_t complete = cut >= full.offsets[2] ? 2 : 1;
    CHECK(collected.kinds.size() == complete);
    REQUIRE(result->damage.has_value());
    CHECK(result->damage->find(path) != std::string::npos);
    CHECK(result->damage->find("byte offset " + std::to_string(full.offsets[complete])) != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("A corrupt length prefix stops reading there", "[wire]") {
  std::vector<uint8_t> stream = SampleStream();
  Collected full;
  const std::string path = TempPath("corrupt.rlt");
  WriteFile(path, stream);
  REQUIRE(Read(path, full).ok());
  stream[full.offsets[1] + 3] = 0x7f;  // Length of the batch frame: ~2 GB.
  WriteFile(path, stream);
  Collected collected;
  absl::StatusOr<TraceReadResult> result = Read(path, collected);
  REQUIRE(result.ok());
  CHECK(collected.kinds.size() == 1);
  REQUIRE(result->damage.has_value());
  CHECK(result->damage->find("corrupt frame length") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("Garbage and empty files are refused with a clear error", "[wire]") {
  const std::string path = TempPath("garbage.rlt");
  std::vector<uint8_t> garbage(1000);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 37 + 11);
  garbage[0] = 16;  // A plausible length, so the verifier is what refuses it.
  garbage[1] = garbage[2] = garbage[3] = 0;
  WriteFile(path, garbage);
  Collected collected;
  absl::StatusOr<TraceReadResult> result = Read(path, collected);
  CHECK_FALSE(result.ok());
  CHECK(std::string(result.status().message()).find("not a readable rlscope trace") != std::string::npos);
  WriteFile(path, {});
  CHECK_FALSE(Read(path, collected).ok());
  std::remove(path.c_str());
  CHECK_FALSE(Read(TempPath("does-not-exist.rlt"), collected).ok());
}

TEST_CASE("Frames from a newer protocol version are refused", "[wire]") {
  flatbuffers::FlatBufferBuilder builder;
  auto hello = wire::CreateHello(builder, wire::kProtocolVersion + 1, 1, 0, 0, 0);
  builder.FinishSizePrefixed(wire::CreateFrame(builder, wire::Message::Hello, hello.Union()), wire::FrameIdentifier());
  absl::StatusOr<const wire::Frame*> frame = VerifyFrame(builder.GetBufferPointer(), builder.GetSize());
  CHECK_FALSE(frame.ok());
  CHECK(std::string(frame.status().message()).find("newer rlscope") != std::string::npos);
}

TEST_CASE("A stream that does not start with Hello is not a trace", "[wire]") {
  BatchEncoder encoder;
  std::vector<uint8_t> stream;
  Append(stream, encoder.EncodeGoodbye(1, 0, 0, "exit"));
  const std::string path = TempPath("nohello.rlt");
  WriteFile(path, stream);
  Collected collected;
  CHECK_FALSE(Read(path, collected).ok());
  std::remove(path.c_str());
}

// Found by test/fuzz/trace_reader_fuzzer: the verifier accepts a union's
// type without its value, and a timeline builder dereferenced the null.
TEST_CASE("A frame naming a message type without the message is refused", "[wire]") {
  flatbuffers::FlatBufferBuilder builder;
  builder.FinishSizePrefixed(wire::CreateFrame(builder, wire::Message::Batch, 0), wire::FrameIdentifier());
  absl::StatusOr<const wire::Frame*> frame = VerifyFrame(builder.GetBufferPointer(), builder.GetSize());
  CHECK_FALSE(frame.ok());
  CHECK(std::string(frame.status().message()) == "frame carries no message");
}

// A damaged length can leave the next frame at an odd address; it is read
// from an aligned copy (UBSan, in the sanitizer build, checks the reads).
TEST_CASE("A frame at a misaligned offset is read, not misread", "[wire]") {
  const std::vector<uint8_t> stream = SampleStream();
  std::vector<uint8_t> shifted(stream.size() + 1);
  std::copy(stream.begin(), stream.end(), shifted.begin() + 1);
  std::vector<wire::Message> kinds;
  absl::StatusOr<TraceReadResult> result = rlscope::collector::ReadTraceBuffer(
      shifted.data() + 1, stream.size(), "shifted.rlt",
      [&](const wire::Frame& frame, uint64_t) { kinds.push_back(frame.message_type()); });
  REQUIRE(result.ok());
  CHECK_FALSE(result->damage.has_value());
  CHECK(kinds == std::vector<wire::Message>{wire::Message::Hello, wire::Message::Batch, wire::Message::Goodbye});
}

// A file cut by another program while it is read: the reader used to map
// the file, and touching the vanished pages raised SIGBUS.
TEST_CASE("A trace truncated while it is read ends in damage instead of a signal", "[wire]") {
  std::vector<uint8_t> stream;
  BatchEncoder encoder;
  ProcessIdentity identity;
  identity.pid = 7;
  Append(stream, encoder.EncodeHello(identity, "tsc"));
  constexpr uint32_t kEvents = 4000;
  for (uint64_t sequence = 1; stream.size() < (size_t{16} << 20); ++sequence) {
    encoder.BeginBatch(sequence, 0);
    encoder.AddThreadEvents(11, 1, kEvents, 0, {}, [](wire::Event* out) {
      for (uint32_t i = 0; i < kEvents; ++i) {
        out[i] = wire::Event(i, i + 1, 0, static_cast<uint16_t>(wire::EventKind::kCudaApi), 0, 0);
      }
    });
    Append(stream, encoder.FinishBatch());
  }
  const std::string path = TempPath("shrinking.rlt");
  WriteFile(path, stream);
  uint64_t frames = 0;
  absl::StatusOr<TraceReadResult> result = ReadTraceFile(path, [&](const wire::Frame&, uint64_t) {
    if (frames++ == 0) REQUIRE(truncate(path.c_str(), 100 << 10) == 0);
  });
  REQUIRE(result.ok());
  REQUIRE(result->damage.has_value());
  CHECK(result->damage->find("while it was read") != std::string::npos);
  CHECK(result->frames >= 1);
  std::remove(path.c_str());
}

TEST_CASE("A FIFO or a device or a directory is not read as a trace", "[wire]") {
  const std::string fifo = TempPath("fifo.rlt");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  Collected collected;
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string("/tmp")}) {
    absl::StatusOr<TraceReadResult> result = Read(path, collected);  // A FIFO must not block.
    REQUIRE_FALSE(result.ok());
    CHECK(std::string(result.status().message()).find(path + ": cannot open: is a") != std::string::npos);
  }
  std::remove(fifo.c_str());
}
