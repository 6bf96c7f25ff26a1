// A run's traces decoded while they are written (report/run_decoding.h):
// the decoded run is the one LoadRun decodes from the finished files.
#include "report/run_decoding.h"

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

TEST_CASE("A run decoded as its traces are written is the run decoded afterwards", "[run_decoding]") {
  const fs::path dir = trace_test::TempPath("rlscope_run_decoding_test", "run");
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  // Two processes: one written in pieces while followed, one that appears
  // only at the end.
  const std::vector<std::vector<uint8_t>> frames = trace_test::SampleFrames(40);
  std::vector<size_t> blocks;
  const std::vector<uint8_t> file = trace_test::Compressed(frames, 10, &blocks);
  const fs::path first = dir / "trace" / "4242.rlt";
  const fs::path second = dir / "trace" / "4243.rlt";

  RunDecoding decoding(dir.string(), /*for_correction=*/true);
  CHECK(decoding.Follow());  // Nothing written yet.
  CHECK(decoding.followed_stream_bytes() == 0);
  WritePrefix(first, file, blocks[2] + 9);  // The Hello block, one block of batches, a piece of the next.
  CHECK(decoding.Follow());
  const uint64_t after_two_blocks = decoding.followed_stream_bytes();
  CHECK(after_two_blocks > 0);
  WritePrefix(first, file, blocks[4]);
  CHECK(decoding.Follow());
  CHECK(decoding.followed_stream_bytes() > after_two_blocks);
  WritePrefix(first, file, file.size());
  WritePrefix(second, file, file.size());
  std::optional<DecodedRun> followed = decoding.Finish({first, second});
  REQUIRE(followed);
  CHECK(followed->kept_for_correction);

  absl::StatusOr<DecodedRun> loaded = LoadRun(dir.string(), {.for_correction = true});
  REQUIRE(loaded.ok());
  REQUIRE(followed->processes.size() == loaded->processes.size());
  CHECK(followed->problems == loaded->problems);
  CHECK(ReportOf(*std::move(followed)) == ReportOf(*std::move(loaded)));
  fs::remove_all(dir);
}

TEST_CASE("A run decoded as it goes stops following past the report's memory", "[run_decoding]") {
  const fs::path dir = trace_test::TempPath("rlscope_run_decoding_test", "budget");
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  const std::vector<std::vector<uint8_t>> frames = trace_test::SampleFrames(40);
  const std::vector<uint8_t> file = trace_test::Compressed(frames, 10);
  trace_test::WriteFile((dir / "trace" / "4242.rlt").string(), file);
  setenv("RLSCOPE_REPORT_MEMORY", "1K", 1);
  RunDecoding decoding(dir.string(), /*for_correction=*/false);
  const bool following = decoding.Follow();
  unsetenv("RLSCOPE_REPORT_MEMORY");
  CHECK_FALSE(following);
  CHECK_FALSE(decoding.Follow());
  // The end of the run then decodes afresh, deciding as LoadRun does.
  CHECK_FALSE(decoding.Finish({dir / "trace" / "4242.rlt"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rlscope::report
