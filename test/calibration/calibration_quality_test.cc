// The quality object of calibration.json: written and read back; files
// without its newer fields still load.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "calibration/overhead_model.h"

namespace cal = rlscope::calibration;

namespace {

constexpr char kOldFile[] = R"({"schema": "rlscope.calibration/1", "rlscope_version": "0.1",
  "machine": {"cpu": "c", "kernel": "k", "gpu": "none", "driver": "none", "cuda_runtime": "none"},
  "costs": {"trampoline": {"ns": 16, "spread_ns": 1, "repetitions": 5, "events": 1000, "uncertain": false}},
  "quality": {"uncertain_costs": []}})";

}  // namespace

TEST_CASE("a calibration without a recorded verdict still loads", "[quality]") {
  absl::StatusOr<cal::OverheadModel> model = cal::ParseOverheadModel(kOldFile, "old.json");
  REQUIRE(model.ok());
  CHECK(model->quality.verdict.empty());
  CHECK_FALSE(model->quality.contention.has_value());
  CHECK(model->Cost("trampoline").value() == 16);
  // Nor is a quality object required at all.
  std::string bare = kOldFile;
  bare = bare.substr(0, bare.find(",\n  \"quality\"")) + "}";
  CHECK(cal::ParseOverheadModel(bare, "bare.json").ok());
}

TEST_CASE("the verdict, reasons, re-measured sites and contention round-trip", "[quality]") {
  cal::OverheadModel model;
  model.costs["trampoline"] = {16, 1, 5, 1000};
  model.quality.verdict = std::string(cal::kVerdictAcceptedUncertain);
  model.quality.reasons = {"python_call@3.11: 583.0 +- 640.0 ns"};
  model.quality.warnings = {"the load average reached 4.2 on 2 CPUs"};
  model.quality.remeasured = {"python_call@3.11"};
  cal::ContentionFigures figures;
  figures.cpus = 2;
  figures.load_average_begin = 3;
  figures.load_average_max = 4.2;
  figures.steal_fraction = 0.01;
  figures.other_busy_cpus = 1.4;
  figures.lowest_kept_fraction = 0.8;
  figures.lowest_kept_site = "python_call@3.11";  // involuntary switches unknown (-1)
  model.quality.contention = figures;
  const std::string path = "/tmp/rlscope-quality-test-" + std::to_string(getpid()) + ".json";
  REQUIRE(cal::WriteOverheadModel(path, model).ok());
  absl::StatusOr<cal::OverheadModel> read = cal::ReadOverheadModel(path);
  std::remove(path.c_str());
  REQUIRE(read.ok());
  CHECK(read->quality.verdict == "accepted-uncertain");
  CHECK(read->quality.reasons == model.quality.reasons);
  CHECK(read->quality.warnings == model.quality.warnings);
  CHECK(read->quality.remeasured == model.quality.remeasured);
  REQUIRE(read->quality.contention.has_value());
  CHECK(read->quality.contention->cpus == 2);
  CHECK(read->quality.contention->load_average_max == Approx(4.2));
  CHECK(read->quality.contention->other_busy_cpus == Approx(1.4));
  CHECK(read->quality.contention->involuntary_switches_per_cpu_s == -1);
  CHECK(read->quality.contention->lowest_kept_site == "python_call@3.11");
}

TEST_CASE("a malformed quality object is refused with one message naming the file", "[quality]") {
  std::string bad = kOldFile;
  bad.replace(bad.find(R"({"uncertain_costs": []})"), 23, R"({"verdict": 3})");
  absl::StatusOr<cal::OverheadModel> model = cal::ParseOverheadModel(bad, "bad.json");
  REQUIRE_FALSE(model.ok());
  CHECK(std::string(model.status().message()).find("bad.json: malformed calibration file (quality:") == 0);
  bad = kOldFile;
  bad.replace(bad.find(R"({"uncertain_costs": []})"), 23, R"({"contention": {"steal_fraction": "x"}})");
  CHECK_FALSE(cal::ParseOverheadModel(bad, "bad.json").ok());
}

TEST_CASE("a process's start-up may cost seconds; a file that would not read back is not written", "[quality]") {
  CHECK(cal::MaxCostNs("python_process@3.11") == cal::kMaxProcessCostNs);
  CHECK(cal::MaxCostNs("native_process") == cal::kMaxProcessCostNs);
  CHECK(cal::MaxCostNs("python_processor") == cal::kMaxCostNs);
  CHECK(cal::MaxCostNs("python_call@3.11") == cal::kMaxCostNs);
  const std::string path = "/tmp/rlscope-quality-range-" + std::to_string(getpid()) + ".json";
  std::remove(path.c_str());
  cal::OverheadModel model;
  model.costs["python_process@3.11"] = {1.458e9, 2e8, 5, 5};  // Seen beside two CPU hogs.
  REQUIRE(cal::WriteOverheadModel(path, model).ok());
  absl::StatusOr<cal::OverheadModel> read = cal::ReadOverheadModel(path);
  REQUIRE(read.ok());
  CHECK(read->costs.at("python_process@3.11").ns == Approx(1.458e9));
  // A per-event cost beyond a second would be refused by every reader:
  // not stored, and the file before it is kept.
  model.costs["python_call@3.11"] = {2e9, 1, 5, 1000};
  const absl::Status refused = cal::WriteOverheadModel(path, model);
  CHECK_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.message()), Catch::Contains("would not read back") &&
                                                 Catch::Contains("python_call@3.11") &&
                                                 Catch::Contains("calibrate again"));
  read = cal::ReadOverheadModel(path);
  std::remove(path.c_str());
  REQUIRE(read.ok());
  CHECK(read->costs.count("python_call@3.11") == 0);
}
