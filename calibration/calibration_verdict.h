// CalibrationVerdict: whether `rlscope calibrate` may store what it
// measured, from the costs' own agreement and the contention seen.
//
// The evidence that a cost is wrong is its repetitions disagreeing (its
// spread): a busy machine whose measurements still agree gives a usable
// calibration, so load by itself only warns. Refused are:
//   - a cost that matters still in doubt after its extra rounds
//     (SiteDoubt: uncertain, or its loops' timer kept too little);
//   - steal time of kStealRefusedFraction or more: time the hypervisor
//     took is invisible inside the guest (no run delay in schedstat), so
//     the loops cannot set it aside, and a steady steal inflates both sides
//     alike: their repetitions agree and the costs are still too high by
//     about that fraction.
// The thresholds are explained in calibration/README.md.
#ifndef RLSCOPE_CALIBRATION_CALIBRATION_VERDICT_H_
#define RLSCOPE_CALIBRATION_CALIBRATION_VERDICT_H_

#include <map>
#include <string>
#include <vector>

#include "calibration/contention.h"
#include "calibration/overhead_model.h"

namespace rlscope::calibration {

// A site in doubt is measured again, up to this many more rounds of
// --repetitions each.
inline constexpr int kExtraRounds = 2;
// A loop whose timer kept less than this share of its iterations (the rest
// waited for a CPU) rests on too little of itself.
inline constexpr double kMinKeptFraction = 0.5;
inline constexpr double kStealRefusedFraction = 0.10;
// Warnings only (the costs' agreement decides):
inline constexpr double kStealWarnedFraction = 0.02;
inline constexpr double kOtherBusyWarnedCpus = 0.5;
// Involuntary switches of the loops: about 280 per CPU-second on the quiet
// 2-core build machine (the profiled runs' own flusher and collector take
// turns with the loop), about 500 with two CPU hogs beside it.
inline constexpr double kInvoluntaryWarnedPerCpuS = 1000;

// SiteMeasurement: one cost as measured, with what the verdict needs.
struct SiteMeasurement {
  MeasuredCost cost;
  // Median over the site's loops of their timer's kept fraction; 1 where
  // the loops report none (start-up sites are timed from outside).
  double kept_fraction = 1;
  // False for costs no program on this machine pays (CUPTI's, measured on
  // the fake runtime where there is no GPU): their doubt only warns.
  bool matters = true;
  int rounds = 1;  // Rounds of --repetitions made.
};

// SiteDoubt: why `site`'s measurement is not to be trusted ("" when it is).
std::string SiteDoubt(const SiteMeasurement& site);

struct Verdict {
  bool trusted = true;
  std::vector<std::string> reasons;   // Why not trusted (what the user is told, and stored).
  std::vector<std::string> warnings;  // Seen, but not disqualifying.
};

// JudgeCalibration: the verdict on a whole sweep.
Verdict JudgeCalibration(const std::map<std::string, SiteMeasurement, std::less<>>& sites,
                         const ContentionFigures& contention);

// SeenQuiet: every contention figure known and below its warning: as far
// as this machine can tell, nothing competed with the loops.
bool SeenQuiet(const ContentionFigures& contention);

// RefusalAdvice: what to do about a refused calibration, after the reasons:
// quiet the machine and calibrate again; or, where it was already quiet
// (SeenQuiet) and the loops still disagreed, that the host is likely
// shared (a virtual machine's neighbours slow it unseen: no steal, no run
// delay) and calibrating again may not help.
std::string RefusalAdvice(const ContentionFigures& contention);

// DescribeContention: the figures in one line for people ("load average
// 0.4 -> 1.3 on 2 CPUs, other work 0.1 CPUs busy, steal 0.0 %, ...").
std::string DescribeContention(const ContentionFigures& contention);

// DescribeQuality: a stored calibration's verdict in one line for the
// reports it corrects: "trusted (figures)", "ACCEPTED UNCERTAIN (...):
// reasons", or that an older rlscope recorded none.
std::string DescribeQuality(const CalibrationQuality& quality);

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_CALIBRATION_VERDICT_H_
