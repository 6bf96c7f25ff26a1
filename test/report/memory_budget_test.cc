#include "report/memory_budget.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "report/report_vocabulary.h"

using namespace rlscope::report;

namespace {

// A scratch directory with the given files (name -> content).
std::filesystem::path Scratch(const std::string& name,
                              std::initializer_list<std::pair<const char*, const char*>> files) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("rlscope-memory-budget-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& [file, content] : files) std::ofstream(dir / file) << content;
  return dir;
}

constexpr char kMeminfo[] =
    "MemTotal:       24576000 kB\n"
    "MemFree:         1000000 kB\n"
    "MemAvailable:    8000000 kB\n"
    "Buffers:          100000 kB\n";

}  // namespace

TEST_CASE("the estimate scales the trace size by the measured factors", "[memory]") {
  const MemoryNeed empty = EstimateReportMemory(0);
  CHECK(empty.uncorrected == kAnalysisBaseBytes);
  CHECK(empty.corrected == kAnalysisBaseBytes);
  const MemoryNeed gigabyte = EstimateReportMemory(1'000'000'000);
  CHECK(gigabyte.uncorrected == 3'000'000'000 + kAnalysisBaseBytes);
  CHECK(gigabyte.corrected == 7'000'000'000 + kAnalysisBaseBytes);
  CHECK(EstimateReportMemory(UINT64_MAX).corrected == UINT64_MAX);  // Saturates, never wraps.
}

TEST_CASE("memory sizes: bytes, binary suffixes, unlimited; anything else is an error", "[memory]") {
  CHECK(*ParseMemorySize("4096") == 4096);
  CHECK(*ParseMemorySize("512M") == 512ull << 20);
  CHECK(*ParseMemorySize("2g") == 2ull << 30);
  CHECK(*ParseMemorySize(" 1T ") == 1ull << 40);
  CHECK(*ParseMemorySize("Unlimited") == UINT64_MAX);
  for (const char* bad : {"", "G", "-1", "1.5G", "12 apples", "99999999999T"}) {
    const absl::StatusOr<uint64_t> parsed = ParseMemorySize(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(std::string(parsed.status().message()).find("RLSCOPE_REPORT_MEMORY") != std::string::npos);
  }
}

TEST_CASE("available memory: MemAvailable, lowered by a cgroup v2 limit", "[memory]") {
  const std::filesystem::path dir = Scratch("available", {{"meminfo", kMeminfo}});
  const std::string meminfo = (dir / "meminfo").string();
  CHECK(*AvailableMemory(meminfo, "") == 8'000'000ull * 1024);
  // A cgroup with 1 GiB left under its limit: that is what counts.
  const std::filesystem::path limited =
      Scratch("limited", {{"memory.max", "3221225472\n"}, {"memory.current", "2147483648\n"}});
  CHECK(*AvailableMemory(meminfo, limited.string()) == 1ull << 30);
  // No limit ("max"): MemAvailable alone.
  const std::filesystem::path unlimited = Scratch("unlimited", {{"memory.max", "max\n"}, {"memory.current", "5\n"}});
  CHECK(*AvailableMemory(meminfo, unlimited.string()) == 8'000'000ull * 1024);
  // Over its limit already: nothing is left.
  const std::filesystem::path over = Scratch("over", {{"memory.max", "100\n"}, {"memory.current", "200\n"}});
  CHECK(*AvailableMemory(meminfo, over.string()) == 0);
  // The page cache charged to the cgroup (the trace just written) is room:
  // 3 GiB limit, 2.5 GiB charged of which 1 GiB inactive file pages.
  const std::filesystem::path cached =
      Scratch("cached", {{"memory.max", "3221225472\n"},
                         {"memory.current", "2684354560\n"},
                         {"memory.stat", "anon 1610612736\nfile 1073741824\ninactive_file 1073741824\n"}});
  CHECK(*AvailableMemory(meminfo, cached.string()) == 1536ull << 20);
  // A limit on an ancestor (a container's slice) counts too.
  const std::filesystem::path parent =
      Scratch("parent", {{"memory.max", "1073741824\n"}, {"memory.current", "805306368\n"}});
  std::filesystem::create_directories(parent / "child");
  std::ofstream(parent / "child" / "memory.max") << "max\n";
  std::ofstream(parent / "child" / "memory.current") << "805306368\n";
  CHECK(*AvailableMemory(meminfo, (parent / "child").string()) == 256ull << 20);
  // Neither source readable: unknown, not zero.
  CHECK_FALSE(AvailableMemory((dir / "missing").string(), (dir / "missing").string()).has_value());
}

TEST_CASE("a cgroup's limits are looked for on it and each ancestor below the root", "[memory]") {
  using Dirs = std::vector<std::string>;
  CHECK(CgroupDirsUpward("/sys/fs/cgroup/system.slice/job.scope") ==
        Dirs{"/sys/fs/cgroup/system.slice/job.scope", "/sys/fs/cgroup/system.slice"});
  CHECK(CgroupDirsUpward("/sys/fs/cgroup") == Dirs{"/sys/fs/cgroup"});
  // Elsewhere (the tests' own trees): up to the top folder.
  CHECK(CgroupDirsUpward("/tmp/cg/a") == Dirs{"/tmp/cg/a", "/tmp/cg", "/tmp"});
  CHECK(CgroupDirsUpward("").empty());  // No cgroup v2: nothing to read.
}

TEST_CASE("the plan: as asked, uncorrected only, or too large; unknown memory never refuses", "[memory]") {
  const MemoryNeed need{300, 700};
  CHECK(PlanReport(need, 1000, true) == ReportPlan::kAsAsked);
  CHECK(PlanReport(need, 700, true) == ReportPlan::kAsAsked);
  CHECK(PlanReport(need, 699, true) == ReportPlan::kUncorrectedOnly);
  CHECK(PlanReport(need, 699, false) == ReportPlan::kAsAsked);
  CHECK(PlanReport(need, 300, true) == ReportPlan::kUncorrectedOnly);
  CHECK(PlanReport(need, 299, true) == ReportPlan::kTooLarge);
  CHECK(PlanReport(need, 299, false) == ReportPlan::kTooLarge);
  CHECK(PlanReport(need, std::nullopt, true) == ReportPlan::kAsAsked);
}

TEST_CASE("sizes are printed as people read them", "[memory]") {
  CHECK(FormatBytes(512) == "512 B");
  CHECK(FormatBytes(712'000'000) == "712 MB");
  CHECK(FormatBytes(3'400'000'000) == "3.4 GB");
  CHECK(FormatBytes(2'500'000'000'000) == "2.5 TB");
}

TEST_CASE("Memory held by the analysis counts as available to it, saturating", "[memory]") {
  CHECK(WithHeld(std::nullopt, 100) == std::nullopt);
  CHECK(WithHeld(1000, 100) == 1100);
  CHECK(WithHeld(UINT64_MAX, 100) == UINT64_MAX);
  CHECK(WithHeld(UINT64_MAX - 50, 100) == UINT64_MAX);
}
