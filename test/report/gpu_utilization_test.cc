// Reading nvidia-smi's samples: timestamps, the run's window, per-GPU
// summaries, and what the parser does with damaged and foreign lines.
#include "report/gpu_utilization.h"

#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace rlscope::report {
namespace {

constexpr int64_t kSecond = 1000000000;
// 2026/11/30 05:36:15 UTC.
constexpr int64_t kT0 = int64_t{1796016975} * kSecond;
constexpr const char* kNoDriver =
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
    "NVIDIA driver is installed and running.";

// Sets TZ for one scope (the parser must not depend on it).
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* zone) {
    if (const char* old = getenv("TZ")) old_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ScopedTimeZone() {
    if (old_)
      setenv("TZ", old_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }

 private:
  std::optional<std::string> old_;
};

const GpuUtilizationSummary* Gpu(const GpuUtilization& result, int index) {
  for (const GpuUtilizationSummary& gpu : result.gpus) {
    if (gpu.gpu_index == index) return &gpu;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("nvidia-smi timestamps read as UTC, whatever this process's zone", "[gpu_utilization]") {
  for (const char* zone : {"UTC0", "EST5EDT,M3.2.0,M11.1.0", "JST-9"}) {
    ScopedTimeZone scoped(zone);
    INFO("TZ=" << zone);
    CHECK(ParseNvidiaSmiTimestamp("2026/11/30 05:36:15.123") == kT0 + 123000000);
    CHECK(ParseNvidiaSmiTimestamp("2026/11/30 05:36:15.000") == kT0);
  }
  CHECK(ParseNvidiaSmiTimestamp("2026/11/30 05:36:15.5") == kT0 + 500000000);
  CHECK(ParseNvidiaSmiTimestamp("2026/11/30 05:36:15.123456789") == kT0 + 123456789);
  CHECK(ParseNvidiaSmiTimestamp("1970/01/01 00:00:00.000") == 0);
}

TEST_CASE("malformed nvidia-smi timestamps are refused", "[gpu_utilization]") {
  for (const char* text :
       {"", "2026/11/30 05:36:15", "2026/11/30 05:36:15.", "2026-11-30 05:36:15.123", "2026/13/30 05:36:15.123",
        "2026/02/31 05:36:15.123", "2026/11/30 24:00:00.000", "2026/11/30 05:36:15.123x",
        "2026/11/30 05:36:15.1234567890", "26/11/30 05:36:15.123", "[N/A]"}) {
    INFO(text);
    CHECK_FALSE(ParseNvidiaSmiTimestamp(text).has_value());
  }
}

TEST_CASE("two GPUs, restricted to the run's window", "[gpu_utilization]") {
  // One sample a second from kT0 to kT0+5s; the run is [kT0+1s, kT0+3s].
  const std::string csv =
      "2026/11/30 05:36:15.000, 0, 100\n"
      "2026/11/30 05:36:15.000, 1, 100\n"
      "2026/11/30 05:36:16.000, 0, 10\n"
      "2026/11/30 05:36:16.000, 1, 50\n"
      "2026/11/30 05:36:17.000, 0, 20\n"
      "2026/11/30 05:36:17.000, 1, 70\n"
      "2026/11/30 05:36:18.000, 0, 60\n"
      "2026/11/30 05:36:18.000, 1, 90\n"
      "2026/11/30 05:36:18.001, 0, 100\n"
      "2026/11/30 05:36:19.000, 1, 100\n";
  const GpuUtilization result = SummarizeGpuUtilizationText(csv, "", kT0 + kSecond, kT0 + 3 * kSecond);
  CHECK(result.problems.empty());
  CHECK(result.samples_total == 10);
  CHECK(result.samples_outside_window == 4);
  CHECK(result.skipped_lines == 0);
  CHECK_FALSE(result.file_empty);
  REQUIRE(result.gpus.size() == 2);
  CHECK(result.gpus[0].gpu_index == 0);
  CHECK(result.gpus[0].samples == 3);
  CHECK(result.gpus[0].mean_percent == Approx(30.0));
  CHECK(result.gpus[0].max_percent == 60);
  CHECK(result.gpus[1].gpu_index == 1);
  CHECK(result.gpus[1].samples == 3);
  CHECK(result.gpus[1].mean_percent == Approx(70.0));
  CHECK(result.gpus[1].max_percent == 90);
}

TEST_CASE("[N/A] and [Not Supported] values are counted, not averaged", "[gpu_utilization]") {
  const std::string csv =
      "2026/11/30 05:36:15.000, 0, 40\n"
      "2026/11/30 05:36:15.000, 1, [N/A]\n"
      "2026/11/30 05:36:16.000, 0, [Not Supported]\n"
      "2026/11/30 05:36:16.000, 1, [N/A]\n"
      "2026/11/30 05:36:17.000, 0, 60\n"
      "2026/11/30 05:36:17.000, 1, [N/A]\n";
  const GpuUtilization result = SummarizeGpuUtilizationText(csv, "", kT0, kT0 + 10 * kSecond);
  CHECK(result.samples_total == 6);
  CHECK(result.unavailable_values == 4);
  CHECK(result.skipped_lines == 0);
  // GPU 1 never had a value: it gets no summary (a 0% would be a lie).
  REQUIRE(result.gpus.size() == 1);
  const GpuUtilizationSummary* gpu0 = Gpu(result, 0);
  REQUIRE(gpu0 != nullptr);
  CHECK(gpu0->samples == 2);
  CHECK(gpu0->unavailable_samples == 1);
  CHECK(gpu0->mean_percent == Approx(50.0));
  CHECK(gpu0->max_percent == 60);
  REQUIRE(result.problems.size() == 2);
  CHECK_THAT(result.problems[0], Catch::Contains("GPU 0") && Catch::Contains("[Not Supported] in 1 of 3 samples"));
  CHECK_THAT(result.problems[1], Catch::Contains("GPU 1") && Catch::Contains("[N/A] in all 3 samples"));
}

TEST_CASE("blank lines are ignored; garbage is skipped, counted and quoted", "[gpu_utilization]") {
  const std::string csv =
      "\n"
      "timestamp, index, utilization.gpu [%]\n"  // a header: noheader forgotten
      "2026/11/30 05:36:15.000, 0, 40\n"
      "   \n"
      "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error\n"
      "2026/11/30 05:36:15.000, 0\n"         // a field short
      "2026/11/30 05:36:15.000, 0, 40, 7\n"  // a field too many
      "2026/11/30 05:36:15.000, -1, 40\n"    // no such index
      "2026/11/30 05:36:15.000, 0, 101\n"    // not a percentage
      "2026/11/30 05:36:15.000, 0, forty\n"
      "2026/11/30 05:36:16.000, 0, 60 %\n"   // units tolerated
      "2026/11/30 05:36:17.000, 0, 80\r\n";  // CRLF tolerated
  const GpuUtilization result = SummarizeGpuUtilizationText(csv, "", kT0, kT0 + 10 * kSecond, "run/nvidia-smi.csv");
  CHECK(result.samples_total == 3);
  CHECK(result.skipped_lines == 7);
  CHECK_FALSE(result.partial_last_line);
  REQUIRE(result.gpus.size() == 1);
  CHECK(result.gpus[0].samples == 3);
  CHECK(result.gpus[0].mean_percent == Approx(60.0));
  REQUIRE(result.problems.size() == 1);
  CHECK(result.problems[0] ==
        "skipped 7 lines of run/nvidia-smi.csv that are not nvidia-smi samples "
        "(the first: \"timestamp, index, utilization.gpu [%]\")");
}

TEST_CASE("a partial last line (nvidia-smi killed mid-write) is dropped quietly", "[gpu_utilization]") {
  // "37" cut to "3" would parse; only the missing newline tells.
  const std::string csv =
      "2026/11/30 05:36:15.000, 0, 37\n"
      "2026/11/30 05:36:15.000, 1, 37\n"
      "2026/11/30 05:36:16.000, 0, 37\n"
      "2026/11/30 05:36:16.000, 1, 3";
  const GpuUtilization result = SummarizeGpuUtilizationText(csv, "", kT0, kT0 + 10 * kSecond);
  CHECK(result.partial_last_line);
  CHECK(result.skipped_lines == 1);
  CHECK(result.samples_total == 3);
  CHECK(result.problems.empty());
  REQUIRE(result.gpus.size() == 2);
  CHECK(result.gpus[1].samples == 1);
  CHECK(result.gpus[1].mean_percent == Approx(37.0));
  CHECK(result.gpus[1].max_percent == 37);
}

TEST_CASE("no samples: the problem quotes nvidia-smi's error", "[gpu_utilization]") {
  SECTION("from stderr") {
    const GpuUtilization result =
        SummarizeGpuUtilizationText("", std::string("\n") + kNoDriver + "\n\n", kT0, kT0 + kSecond);
    CHECK(result.file_empty);
    CHECK(result.gpus.empty());
    REQUIRE(result.problems.size() == 1);
    CHECK(result.problems[0] == std::string("nvidia-smi printed no samples: ") + kNoDriver);
  }
  SECTION("from stdout when stderr is empty") {
    const GpuUtilization result = SummarizeGpuUtilizationText("No devices were found\n", "", kT0, kT0 + kSecond);
    CHECK_FALSE(result.file_empty);
    REQUIRE_FALSE(result.problems.empty());
    CHECK(result.problems[0] == "nvidia-smi printed no samples: No devices were found");
  }
  SECTION("nothing at all") {
    const GpuUtilization result = SummarizeGpuUtilizationText("", "", kT0, kT0 + kSecond);
    REQUIRE(result.problems.size() == 1);
    CHECK_THAT(result.problems[0], Catch::StartsWith("nvidia-smi printed no samples, and no error"));
  }
}

TEST_CASE("samples that all miss the run's window are reported", "[gpu_utilization]") {
  const std::string csv =
      "2026/11/30 05:36:15.000, 0, 37\n"
      "2026/11/30 05:36:16.000, 0, 37\n";
  const GpuUtilization result = SummarizeGpuUtilizationText(csv, "", kT0 + 3600 * kSecond, kT0 + 3601 * kSecond);
  CHECK(result.gpus.empty());
  CHECK(result.samples_outside_window == 2);
  REQUIRE(result.problems.size() == 1);
  CHECK(result.problems[0] ==
        "none of nvidia-smi's 2 samples (2026/11/30 05:36:15.000 UTC to 2026/11/30 05:36:16.000 UTC) lie within "
        "the run (2026/11/30 06:36:15.000 UTC to 2026/11/30 06:36:16.000 UTC), so its GPU utilization is not shown");
}

TEST_CASE("files: missing, and read from disk", "[gpu_utilization]") {
  const std::string base = "/tmp/rlscope_test_" + std::to_string(getpid()) + "_gpu";
  SECTION("missing") {
    const GpuUtilization result = SummarizeGpuUtilization(base + "_missing.csv", base + "_missing.err", 0, kT0);
    CHECK(result.file_missing);
    CHECK(result.gpus.empty());
    REQUIRE(result.problems.size() == 1);
    CHECK_THAT(result.problems[0],
               Catch::Contains(base + "_missing.csv") && Catch::Contains("No such file or directory"));
  }
  SECTION("present") {
    const std::string csv = base + ".csv";
    const std::string err = base + ".err";
    std::ofstream(csv) << "2026/11/30 05:36:15.000, 0, 37\n2026/11/30 05:36:15.000, 1, 90\n";
    std::ofstream(err) << "";
    const GpuUtilization result = SummarizeGpuUtilization(csv, err, kT0, kT0);
    unlink(csv.c_str());
    unlink(err.c_str());
    CHECK_FALSE(result.file_missing);
    CHECK(result.problems.empty());
    REQUIRE(result.gpus.size() == 2);
    CHECK(result.gpus[0].mean_percent == Approx(37.0));
    CHECK(result.gpus[1].mean_percent == Approx(90.0));
  }
}

}  // namespace rlscope::report
