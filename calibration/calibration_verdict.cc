#include "calibration/calibration_verdict.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rlscope::calibration {

namespace {

std::string FormatCost(const MeasuredCost& cost) {
  if (std::abs(cost.ns) >= 1e5 || cost.spread_ns >= 1e5) {
    return absl::StrFormat("%.3f +- %.3f ms", cost.ns / 1e6, cost.spread_ns / 1e6);
  }
  return absl::StrFormat("%.1f +- %.1f ns", cost.ns, cost.spread_ns);
}

std::string Rounds(int rounds) { return rounds == 1 ? "1 round" : absl::StrFormat("%d rounds", rounds); }

}  // namespace

std::string SiteDoubt(const SiteMeasurement& site) {
  const MeasuredCost& cost = site.cost;
  if (Uncertain(cost)) {
    const bool negative = cost.ns < -std::max(cost.spread_ns, kUncertainFloorNs);
    return absl::StrFormat("%s after %d repetitions in %s: %s", FormatCost(cost), cost.repetitions, Rounds(site.rounds),
                           negative ? "below zero by more than its spread (the baseline loops were disturbed)"
                                    : "its repetitions disagree by more than the cost itself");
  }
  if (site.kept_fraction < kMinKeptFraction) {
    return absl::StrFormat(
        "%s after %d repetitions in %s, but its loops' timer kept only %.0f %% of their "
        "iterations (the rest waited for a CPU): too little to rest on",
        FormatCost(cost), cost.repetitions, Rounds(site.rounds), 100 * site.kept_fraction);
  }
  return "";
}

Verdict JudgeCalibration(const std::map<std::string, SiteMeasurement, std::less<>>& sites,
                         const ContentionFigures& contention) {
  Verdict verdict;
  for (const auto& [name, site] : sites) {
    const std::string doubt = SiteDoubt(site);
    if (doubt.empty()) continue;
    if (site.matters) {
      verdict.reasons.push_back(absl::StrFormat("%s: %s", name, doubt));
    } else {
      verdict.warnings.push_back(
          absl::StrFormat("%s: %s (no program here pays it: not held against the calibration)", name, doubt));
    }
  }
  if (contention.steal_fraction >= kStealRefusedFraction) {
    verdict.reasons.push_back(absl::StrFormat(
        "steal time was %.1f %% of the CPUs' time (refused from %.0f %%): the hypervisor ran other guests, a wait the "
        "loops cannot see or set aside, so every cost comes out too high by about that share",
        100 * contention.steal_fraction, 100 * kStealRefusedFraction));
  } else if (contention.steal_fraction >= kStealWarnedFraction) {
    verdict.warnings.push_back(absl::StrFormat("steal time was %.1f %% of the CPUs' time: costs may be that much high",
                                               100 * contention.steal_fraction));
  }
  if (contention.cpus > 0 && contention.load_average_max >= contention.cpus) {
    verdict.warnings.push_back(absl::StrFormat(
        "the load average reached %.1f on %d CPUs: other work competed with the loops (their timer set aside what "
        "waited for a CPU)",
        contention.load_average_max, contention.cpus));
  }
  if (contention.other_busy_cpus >= kOtherBusyWarnedCpus) {
    verdict.warnings.push_back(
        absl::StrFormat("other work kept %.1f CPUs busy on average meanwhile", contention.other_busy_cpus));
  }
  if (contention.involuntary_switches_per_cpu_s >= kInvoluntaryWarnedPerCpuS) {
    verdict.warnings.push_back(absl::StrFormat("the loops were switched out involuntarily %.0f times per CPU-second",
                                               contention.involuntary_switches_per_cpu_s));
  }
  verdict.trusted = verdict.reasons.empty();
  return verdict;
}

bool SeenQuiet(const ContentionFigures& c) {
  return c.cpus > 0 && c.load_average_max >= 0 && c.load_average_max < c.cpus && c.steal_fraction >= 0 &&
         c.steal_fraction < kStealWarnedFraction && c.other_busy_cpus >= 0 &&
         c.other_busy_cpus < kOtherBusyWarnedCpus && c.involuntary_switches_per_cpu_s >= 0 &&
         c.involuntary_switches_per_cpu_s < kInvoluntaryWarnedPerCpuS;
}

std::string RefusalAdvice(const ContentionFigures& contention) {
  constexpr char kAccept[] =
      "store it anyway with --accept-uncertain (marked \"accepted-uncertain\" in the file, and stated by every "
      "report it corrects)";
  if (SeenQuiet(contention)) {
    return absl::StrCat(
        "this machine looked quiet (no load, steal or competing work seen), yet the same loops took different times "
        "from one run to the next: a virtual machine whose host is shared does this (its neighbours slow it where "
        "the guest cannot see), and calibrating again may not help. Try again once, later; else ",
        kAccept);
  }
  return absl::StrCat(
      "stop or wait for other work on this machine (builds, test suites, training jobs) and run `rlscope calibrate` "
      "again; or, where a quiet machine cannot be had, ",
      kAccept);
}

std::string DescribeContention(const ContentionFigures& c) {
  std::vector<std::string> parts;
  if (c.load_average_begin >= 0) {
    parts.push_back(absl::StrFormat("load average %.2f before, up to %.2f, on %d CPUs", c.load_average_begin,
                                    c.load_average_max, c.cpus));
  }
  if (c.other_busy_cpus >= 0) parts.push_back(absl::StrFormat("other work %.2f CPUs busy", c.other_busy_cpus));
  if (c.steal_fraction >= 0) parts.push_back(absl::StrFormat("steal %.1f %%", 100 * c.steal_fraction));
  if (c.involuntary_switches_per_cpu_s >= 0) {
    parts.push_back(absl::StrFormat("%.0f involuntary switches per loop CPU-second", c.involuntary_switches_per_cpu_s));
  }
  if (c.lowest_kept_fraction >= 0) {
    parts.push_back(absl::StrFormat("loops kept >= %.0f %% of their iterations (lowest: %s)",
                                    100 * c.lowest_kept_fraction, c.lowest_kept_site));
  }
  return parts.empty() ? "no contention figures" : absl::StrJoin(parts, ", ");
}

std::string DescribeQuality(const CalibrationQuality& quality) {
  const std::string seen =
      quality.contention ? absl::StrFormat(" (made at %s)", DescribeContention(*quality.contention)) : "";
  if (quality.verdict.empty()) {
    return "not recorded (made by an rlscope before calibrations judged themselves; `rlscope calibrate` again "
           "records it)";
  }
  if (quality.verdict == kVerdictTrusted) {
    std::string line = absl::StrCat("trusted", seen);
    if (!quality.warnings.empty()) {
      line += absl::StrFormat("; %d warning(s) then, under quality.warnings in the calibration file",
                              quality.warnings.size());
    }
    return line;
  }
  if (quality.verdict == kVerdictAcceptedUncertain) {
    return absl::StrCat("ACCEPTED UNCERTAIN, stored with --accept-uncertain although refused: ",
                        quality.reasons.empty() ? "no reason recorded" : absl::StrJoin(quality.reasons, "; "),
                        "; corrections by it are approximate, calibrate again on a quiet machine", seen);
  }
  return absl::StrCat(quality.verdict, seen);  // A verdict of a later rlscope.
}

}  // namespace rlscope::calibration
