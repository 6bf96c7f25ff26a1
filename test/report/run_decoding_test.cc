// A run's traces decoded while they are written (report/run_decoding.h):
// the decoded run is the one LoadRun decodes from the finished files.
#include "report/run_decoding.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "report/report_json.h"
#include "report/run_loader.h"
#include "report/run_report.h"
#include "test/collector/trace_test_support.h"

namespace rlscope::report {
namespace {

namespace fs = std::filesystem;

std::string ReportOf(DecodedRun run) { return FormatReportJson(AnalyseRun(std::move(run), {})); }

void WritePrefix(const fs::path& path, const std::vector<uint8_t>& bytes, size_t size) {
  trace_test::WriteFile(path.string(),
                        std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size)));
}

// A Python process's stream: a Hello (pid, start ticks), then `batches`
// batches of one thread calling `functions` in turn (each a native call
// from a user line), then a Goodbye; each frame's bytes on their own.
std::vector<std::vector<uint8_t>> PythonFrames(int pid, uint64_t start_ticks, int64_t start_ns,
                                               const std::vector<std::string>& functions, int batches) {
  std::vector<std::vector<uint8_t>> frames;
  preload::BatchEncoder encoder;
  preload::ProcessIdentity identity = trace_test::SampleIdentity();
  identity.pid = pid;
  identity.proc_start_ticks = start_ticks;
  identity.start_ns = start_ns;
  frames.emplace_back();
  trace_test::Append(frames.back(), encoder.EncodeHello(identity, "tsc"));
  const auto ev = [](int64_t begin, int64_t end, wire::EventKind kind, uint32_t name = 0, uint64_t payload = 0) {
    return wire::Event(begin, end, name, static_cast<uint16_t>(kind), 0, payload);
  };
  for (int b = 0; b < batches; ++b) {
    encoder.BeginBatch(static_cast<uint64_t>(b + 1), start_ns + (b + 1) * 10000);
    if (b == 0) {
      encoder.AddModule("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so", 0x1000, 0x2000, 0);
      encoder.AddString(1, "train (/home/me/train.py:1)");
    }
    // Each function's string comes with the batch that first calls it.
    const std::string& function = functions[static_cast<size_t>(b) % functions.size()];
    const auto id = static_cast<uint32_t>(2 + static_cast<size_t>(b) % functions.size());
    if (b < static_cast<int>(functions.size())) encoder.AddString(id, function);
    std::vector<wire::Event> events;
    if (b == 0) {
      events.push_back(ev(start_ns, start_ns, wire::EventKind::kThreadBegin));
      events.push_back(ev(start_ns, start_ns, wire::EventKind::kPythonThread));
    }
    for (int i = 0; i < 20; ++i) {
      const int64_t at = start_ns + b * 10000 + i * 400 + 100;
      events.push_back(ev(at, at, wire::EventKind::kPythonUserLine, 1, 10 + static_cast<uint64_t>(i)));
      events.push_back(ev(at + 10, at + 200 + i, wire::EventKind::kPythonCall, id, 0x1500));
    }
    encoder.AddThreadEvents(7, 7, static_cast<uint32_t>(events.size()), 0, {}, [&](wire::Event* out) {
      for (size_t i = 0; i < events.size(); ++i) out[i] = events[i];
    });
    frames.emplace_back();
    trace_test::Append(frames.back(), encoder.FinishBatch());
  }
  frames.emplace_back();
  trace_test::Append(frames.back(), encoder.EncodeGoodbye(start_ns + (batches + 1) * 10000, 0, 0, "exit"));
  return frames;
}

TEST_CASE("A run decoded as its traces are written is the run decoded afterwards", "[run_decoding]") {
  const fs::path dir = trace_test::TempPath("rlscope_run_decoding_test", "run");
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  // Three streams: process 100, and process 200 with the image it exec'd
  // (200.1.rlt, same pid and start: one process), each naming functions
  // of its own, all written in pieces and followed in turns.
  struct Stream {
    fs::path path;
    std::vector<uint8_t> bytes;
    std::vector<size_t> blocks;
  };
  std::vector<Stream> streams;
  const auto add = [&](const char* file, int pid, uint64_t start_ticks, int64_t start_ns,
                       const std::vector<std::string>& functions) {
    Stream& stream = streams.emplace_back();
    stream.path = dir / "trace" / file;
    stream.bytes = trace_test::Compressed(PythonFrames(pid, start_ticks, start_ns, functions, 12), 3, &stream.blocks);
  };
  const std::string torch = " (/usr/lib/python3/dist-packages/torch/nn/";
  add("100.rlt", 100, 5, 1000, {"a_one" + torch + "a.py:3)", "a_two" + torch + "a.py:9)"});
  add("200.rlt", 200, 7, 2000, {"b_one" + torch + "b.py:3)"});
  add("200.1.rlt", 200, 7, 500000, {"c_one" + torch + "c.py:3)", "b_one" + torch + "b.py:3)"});

  RunDecoding decoding(dir.string(), /*for_correction=*/true);
  CHECK(decoding.Follow());  // Nothing written yet.
  CHECK(decoding.followed_stream_bytes() == 0);
  // The streams grow in turns, the last one first; each read cuts a
  // block in two.
  uint64_t followed = 0;
  for (size_t step = 1; step <= 4; ++step) {
    for (size_t s = streams.size(); s-- > 0;) {
      const Stream& stream = streams[s];
      WritePrefix(stream.path, stream.bytes, stream.blocks[step] + 7);
    }
    CHECK(decoding.Follow());
    CHECK(decoding.followed_stream_bytes() > followed);
    followed = decoding.followed_stream_bytes();
  }
  for (const Stream& stream : streams) WritePrefix(stream.path, stream.bytes, stream.bytes.size());
  std::vector<fs::path> files = {streams[0].path, streams[1].path, streams[2].path};
  std::sort(files.begin(), files.end());  // As LoadRun lists them.
  std::optional<DecodedRun> decoded = decoding.Finish(files);
  REQUIRE(decoded);
  CHECK(decoded->kept_for_correction);

  absl::StatusOr<DecodedRun> loaded = LoadRun(dir.string(), {.for_correction = true});
  REQUIRE(loaded.ok());
  REQUIRE(decoded->processes.size() == 2);  // 200's two images are one process.
  REQUIRE(loaded->processes.size() == 2);
  CHECK(decoded->problems == loaded->problems);
  CHECK(decoded->names.size() == loaded->names.size());
  for (int32_t label = 0; label < static_cast<int32_t>(loaded->names.size()); ++label) {
    CHECK(decoded->names.Name(label) == loaded->names.Name(label));
  }
  CHECK(ReportOf(*std::move(decoded)) == ReportOf(*std::move(loaded)));
  fs::remove_all(dir);
}

TEST_CASE("A run decoded as it goes stops following past the report's memory", "[run_decoding]") {
  const fs::path dir = trace_test::TempPath("rlscope_run_decoding_test", "budget");
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  const std::vector<std::vector<uint8_t>> frames = trace_test::SampleFrames(40);
  const std::vector<uint8_t> file = trace_test::Compressed(frames, 10);
  trace_test::WriteFile((dir / "trace" / "4242.rlt").string(), file);
  SECTION("a budget too small") {
    setenv("RLSCOPE_REPORT_MEMORY", "1K", 1);
    RunDecoding decoding(dir.string(), /*for_correction=*/false);
    const bool following = decoding.Follow();
    unsetenv("RLSCOPE_REPORT_MEMORY");
    CHECK_FALSE(following);
    CHECK_FALSE(decoding.Follow());
    // The end of the run then decodes afresh, deciding as LoadRun does.
    CHECK_FALSE(decoding.Finish({dir / "trace" / "4242.rlt"}));
  }
  SECTION("the budget is read again at each read") {
    RunDecoding decoding(dir.string(), /*for_correction=*/false);
    CHECK(decoding.Follow());
    setenv("RLSCOPE_REPORT_MEMORY", "1K", 1);
    const bool following = decoding.Follow();
    unsetenv("RLSCOPE_REPORT_MEMORY");
    CHECK_FALSE(following);
  }
  SECTION("a budget set for the report holds for a decoding begun during the run") {
    RunDecoding decoding(dir.string(), /*for_correction=*/false);
    CHECK(decoding.Follow());
    // A total: what the decoding holds is not added to it.
    setenv("RLSCOPE_REPORT_MEMORY", "64M", 1);
    absl::StatusOr<DecodedRun> loaded = LoadRun(dir.string(), {.started = &decoding});
    unsetenv("RLSCOPE_REPORT_MEMORY");
    REQUIRE_FALSE(loaded.ok());
    CHECK_THAT(std::string(loaded.status().message()), Catch::Contains("the trace is kept"));
    CHECK_FALSE(decoding.following());  // Let go.
  }
  SECTION("a budget that does not parse") {
    setenv("RLSCOPE_REPORT_MEMORY", "lots", 1);
    RunDecoding decoding(dir.string(), /*for_correction=*/false);
    const bool following = decoding.Follow();
    unsetenv("RLSCOPE_REPORT_MEMORY");
    CHECK_FALSE(following);
  }
  SECTION("no limit") {
    setenv("RLSCOPE_REPORT_MEMORY", "unlimited", 1);
    RunDecoding decoding(dir.string(), /*for_correction=*/false);
    const bool first = decoding.Follow();
    const bool second = decoding.Follow();  // Holding some now.
    unsetenv("RLSCOPE_REPORT_MEMORY");
    CHECK(first);
    CHECK(second);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rlscope::report
