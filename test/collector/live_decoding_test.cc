// The trace decoded while the program runs (collector/live_decoding.h):
// when it is on, the thread that follows the run, and its hand-over.
#include "collector/live_decoding.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "report/run_decoding.h"
#include "test/collector/trace_test_support.h"

namespace rlscope::collector {
namespace {

namespace fs = std::filesystem;

TEST_CASE("Decoding during the run: the variable decides, else 4 CPUs or more", "[live_decoding]") {
  CHECK(ShouldDecodeDuringRun(nullptr, 4));
  CHECK(ShouldDecodeDuringRun(nullptr, 16));
  CHECK_FALSE(ShouldDecodeDuringRun(nullptr, 2));
  CHECK_FALSE(ShouldDecodeDuringRun(nullptr, 3));
  for (const char* on : {"1", "on", "yes", "true"}) CHECK(ShouldDecodeDuringRun(on, 2));
  for (const char* off : {"0", "off", "no", "false"}) CHECK_FALSE(ShouldDecodeDuringRun(off, 16));
  // Anything else is as unset.
  CHECK(ShouldDecodeDuringRun("maybe", 8));
  CHECK_FALSE(ShouldDecodeDuringRun("", 2));
  CHECK(UsableCpus() >= 1);
}

TEST_CASE("A container's CPU quota is read from cpu.max", "[live_decoding]") {
  CHECK(CpuQuota("200000 100000") == 2);
  CHECK(CpuQuota("350000 100000") == 3);  // Whole CPUs.
  CHECK(CpuQuota("999999999999999999 1") == 1 << 20);
  CHECK(CpuQuota("50000 100000") == 1);
  CHECK_FALSE(CpuQuota("max 100000"));
  CHECK_FALSE(CpuQuota(""));
  CHECK_FALSE(CpuQuota("-5 100000"));
  CHECK_FALSE(CpuQuota("12x 100000"));
  CHECK_FALSE(CpuQuota("100000 0"));
}

TEST_CASE("The decoding thread follows the run and hands its decoding over", "[live_decoding]") {
  const fs::path dir = trace_test::TempPath("rlscope_live_decoding_test", "run");
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  const std::vector<uint8_t> file = trace_test::Compressed(trace_test::SampleFrames(40), 10);
  trace_test::WriteFile((dir / "trace" / "4242.rlt").string(), file);
  SECTION("following") {
    LiveDecoding live(dir.string(), /*for_correction=*/false);
    std::this_thread::sleep_for(LiveDecoding::kInterval + std::chrono::milliseconds(100));
    std::unique_ptr<report::RunDecoding> decoding = live.Stop();
    REQUIRE(decoding != nullptr);
    CHECK(decoding->following());
    CHECK(decoding->followed_stream_bytes() > 0);
    CHECK(decoding->Finish({dir / "trace" / "4242.rlt"}));
    CHECK(live.Stop() == nullptr);  // Once only.
  }
  SECTION("past the memory budget the thread lets go") {
    setenv("RLSCOPE_REPORT_MEMORY", "1K", 1);
    LiveDecoding live(dir.string(), /*for_correction=*/false);
    std::this_thread::sleep_for(LiveDecoding::kInterval + std::chrono::milliseconds(100));
    std::unique_ptr<report::RunDecoding> decoding = live.Stop();
    unsetenv("RLSCOPE_REPORT_MEMORY");
    REQUIRE(decoding != nullptr);
    CHECK_FALSE(decoding->following());
    CHECK_FALSE(decoding->Finish({dir / "trace" / "4242.rlt"}));
  }
  SECTION("stopped at once, and destroyed without a hand-over") {
    { LiveDecoding live(dir.string(), /*for_correction=*/false); }
    LiveDecoding live(dir.string(), /*for_correction=*/false);
    CHECK(live.Stop() != nullptr);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rlscope::collector
