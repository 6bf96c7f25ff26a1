#include "calibration/calibration_verdict.h"

#include <catch2/catch.hpp>
#include <string>

namespace cal = rlscope::calibration;

namespace {

bool Mentions(const std::vector<std::string>& lines, const std::string& needle) {
  for (const std::string& line : lines) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

cal::SiteMeasurement Site(double ns, double spread, double kept = 1, bool matters = true, int rounds = 1) {
  cal::SiteMeasurement site;
  site.cost = {ns, spread, 5 * rounds, 1000};
  site.kept_fraction = kept;
  site.matters = matters;
  site.rounds = rounds;
  return site;
}

cal::ContentionFigures Quiet() {
  cal::ContentionFigures figures;
  figures.cpus = 2;
  figures.load_average_begin = 0.1;
  figures.load_average_max = 1.1;
  figures.steal_fraction = 0;
  figures.other_busy_cpus = 0.05;
  figures.involuntary_switches_per_cpu_s = 3;
  figures.lowest_kept_fraction = 0.99;
  figures.lowest_kept_site = "trampoline";
  return figures;
}

}  // namespace

TEST_CASE("agreeing costs on a quiet machine are trusted", "[verdict]") {
  const cal::Verdict verdict =
      cal::JudgeCalibration({{"trampoline", Site(16, 0.5)}, {"python_call@3.11", Site(58, 4)}}, Quiet());
  CHECK(verdict.trusted);
  CHECK(verdict.reasons.empty());
  CHECK(verdict.warnings.empty());
}

TEST_CASE("a cost still uncertain after its extra rounds refuses the calibration, naming it", "[verdict]") {
  const cal::Verdict verdict =
      cal::JudgeCalibration({{"trampoline", Site(16, 0.5)}, {"python_call@3.11", Site(583, 640, 1, true, 3)}}, Quiet());
  CHECK_FALSE(verdict.trusted);
  REQUIRE(verdict.reasons.size() == 1);
  CHECK(verdict.reasons[0].find("python_call@3.11: 583.0 +- 640.0 ns after 15 repetitions in 3 rounds") == 0);
  CHECK(Mentions(verdict.reasons, "disagree"));
}

TEST_CASE("a cost negative past its spread refuses the calibration", "[verdict]") {
  const cal::Verdict verdict = cal::JudgeCalibration({{"nvtx_range", Site(-90, 10)}}, Quiet());
  CHECK_FALSE(verdict.trusted);
  CHECK(Mentions(verdict.reasons, "below zero"));
}

TEST_CASE("a cost about nothing is not in doubt whatever its sign", "[verdict]") {
  CHECK(cal::SiteDoubt(Site(-2, 12)).empty());
  CHECK(cal::JudgeCalibration({{"python_builtin@3.11", Site(-2, 12)}}, Quiet()).trusted);
}

TEST_CASE("a cost whose loops' timer kept too little is in doubt", "[verdict]") {
  CHECK(cal::SiteDoubt(Site(16, 0.5, 0.3)).find("kept only 30 %") != std::string::npos);
  CHECK(cal::SiteDoubt(Site(16, 0.5, cal::kMinKeptFraction)).empty());
  CHECK_FALSE(cal::JudgeCalibration({{"trampoline", Site(16, 0.5, 0.3)}}, Quiet()).trusted);
}

TEST_CASE("a doubtful cost no program here pays only warns", "[verdict]") {
  const cal::Verdict verdict =
      cal::JudgeCalibration({{"cupti:cudaLaunchKernel", Site(100, 900, 1, /*matters=*/false)}}, Quiet());
  CHECK(verdict.trusted);
  CHECK(Mentions(verdict.warnings, "cupti:cudaLaunchKernel"));
}

TEST_CASE("load and other work warn but do not refuse costs that agree", "[verdict]") {
  cal::ContentionFigures busy = Quiet();
  busy.load_average_begin = 3;
  busy.load_average_max = 4.2;
  busy.other_busy_cpus = 1.4;
  busy.involuntary_switches_per_cpu_s = 3000;
  const cal::Verdict verdict = cal::JudgeCalibration({{"trampoline", Site(16, 0.5)}}, busy);
  CHECK(verdict.trusted);
  CHECK(Mentions(verdict.warnings, "load average reached 4.2 on 2 CPUs"));
  CHECK(Mentions(verdict.warnings, "1.4 CPUs busy"));
  CHECK(Mentions(verdict.warnings, "involuntarily 3000 times"));
}

TEST_CASE("heavy steal time refuses even agreeing costs; a little warns", "[verdict]") {
  cal::ContentionFigures stolen = Quiet();
  stolen.steal_fraction = 0.25;
  const cal::Verdict refused = cal::JudgeCalibration({{"trampoline", Site(16, 0.5)}}, stolen);
  CHECK_FALSE(refused.trusted);
  CHECK(Mentions(refused.reasons, "steal time was 25.0 %"));
  stolen.steal_fraction = 0.05;
  const cal::Verdict warned = cal::JudgeCalibration({{"trampoline", Site(16, 0.5)}}, stolen);
  CHECK(warned.trusted);
  CHECK(Mentions(warned.warnings, "steal time was 5.0 %"));
}

TEST_CASE("unknown figures neither warn nor refuse", "[verdict]") {
  const cal::ContentionFigures unknown;  // All -1: /proc unreadable.
  const cal::Verdict verdict = cal::JudgeCalibration({{"trampoline", Site(16, 0.5)}}, unknown);
  CHECK(verdict.trusted);
  CHECK(verdict.warnings.empty());
  CHECK(cal::DescribeContention(unknown) == "no contention figures");
}

TEST_CASE("the contention figures read as one line", "[verdict]") {
  const std::string line = cal::DescribeContention(Quiet());
  CHECK(line.find("load average 0.10 before, up to 1.10, on 2 CPUs") != std::string::npos);
  CHECK(line.find("steal 0.0 %") != std::string::npos);
  CHECK(line.find("lowest: trampoline") != std::string::npos);
}

TEST_CASE("a report's line on the calibration states its verdict", "[verdict]") {
  cal::CalibrationQuality quality;
  CHECK(cal::DescribeQuality(quality).find("not recorded") == 0);
  quality.verdict = "trusted";
  quality.contention = Quiet();
  CHECK(cal::DescribeQuality(quality).find("trusted (made at load average 0.10") == 0);
  quality.verdict = "accepted-uncertain";
  quality.reasons = {"python_call@3.11: 583.0 +- 640.0 ns"};
  const std::string accepted = cal::DescribeQuality(quality);
  CHECK(accepted.find("ACCEPTED UNCERTAIN") == 0);
  CHECK(accepted.find("python_call@3.11: 583.0 +- 640.0 ns") != std::string::npos);
  CHECK(accepted.find("approximate") != std::string::npos);
}

TEST_CASE("a refusal on a machine that looked quiet points at a shared host", "[verdict]") {
  CHECK(cal::SeenQuiet(Quiet()));
  CHECK(cal::RefusalAdvice(Quiet()).find("host is shared") != std::string::npos);
  CHECK(cal::RefusalAdvice(Quiet()).find("--accept-uncertain") != std::string::npos);
  // Busy, or not known to be quiet: quiet it and calibrate again.
  cal::ContentionFigures busy = Quiet();
  busy.other_busy_cpus = 1.5;
  CHECK_FALSE(cal::SeenQuiet(busy));
  CHECK(cal::RefusalAdvice(busy).find("stop or wait for other work") != std::string::npos);
  cal::ContentionFigures unknown = Quiet();
  unknown.steal_fraction = -1;
  CHECK_FALSE(cal::SeenQuiet(unknown));
  CHECK(cal::RefusalAdvice(unknown).find("--accept-uncertain") != std::string::npos);
}
