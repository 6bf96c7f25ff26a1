// Contention: what says the machine was busy while `rlscope calibrate`
// measured, read from /proc and getrusage around the sweep.
//
// A cost is the difference of two loops' times; work competing for the
// CPUs lands in one of them. The loops set aside waits for a CPU
// themselves (workloads/uncontended_timer.h); these figures say how much
// competition there was, so the verdict (calibration_verdict.h) can warn
// about it, and refuse where the loops cannot have set it aside (steal).
//
// The parsers take a file's text and return values, so they are tested on
// text; Snapshot() is the only part that reads the machine.
#ifndef RLSCOPE_CALIBRATION_CONTENTION_H_
#define RLSCOPE_CALIBRATION_CONTENTION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace rlscope::calibration {

// ParseLoadAverage: the 1-minute load average of /proc/loadavg's text
// ("0.52 0.61 0.70 1/123 4567").
absl::StatusOr<double> ParseLoadAverage(std::string_view loadavg);

// CpuTimes: the aggregate "cpu" line of /proc/stat, in clock ticks
// (USER_HZ) since boot.
struct CpuTimes {
  uint64_t total = 0;  // Every field but guest time (already in user).
  uint64_t idle = 0;   // idle + iowait.
  uint64_t steal = 0;  // Taken by the hypervisor for other guests.
};
// ParseCpuTimes: those of /proc/stat's text. Kernels before 2.6.11 lack
// steal (0 then); at least user, nice, system and idle are required.
absl::StatusOr<CpuTimes> ParseCpuTimes(std::string_view proc_stat);

// ParseCpuList: how many CPUs a kernel CPU list names
// (/sys/devices/system/cpu/online: "0-3,6,8-9" is 7).
absl::StatusOr<int> ParseCpuList(std::string_view list);

// ContentionSnapshot: the machine and this process tree at one instant.
struct ContentionSnapshot {
  double wall_s = 0;                 // CLOCK_MONOTONIC.
  CpuTimes cpu;                      // Whole machine.
  bool have_cpu = false;             // /proc/stat was readable.
  double ticks_per_s = 100;          // USER_HZ.
  double own_cpu_s = 0;              // This process and its reaped children, user + system.
  double children_cpu_s = 0;         // Reaped children only (the loops).
  int64_t children_involuntary = 0;  // Their involuntary context switches.
  double load_average = -1;          // 1-minute; -1 when unreadable.
  int cpus = 0;                      // Online CPUs.
};

// ContentionFigures: what happened between two snapshots (and, from the
// sweep, what the loops' timer set aside). Stored in the calibration's
// quality; -1 marks a figure that could not be read.
struct ContentionFigures {
  int cpus = 0;
  double load_average_begin = -1;  // Before anything was measured: others' load.
  double load_average_max = -1;    // Highest seen between cases (includes the sweep's own).
  double steal_fraction = -1;      // Of all CPUs' time.
  // CPUs kept busy on average by work that is not this calibration
  // (machine-wide busy time less this process tree's own CPU time).
  double other_busy_cpus = -1;
  // Involuntary context switches of the loops per second of their CPU
  // time: preemptions by competing work (near 0 on an idle core).
  double involuntary_switches_per_cpu_s = -1;
  // Lowest share of a site's timed iterations that its loops' timer kept
  // (UncontendedTimer::kept_fraction; median over the site's loops), and
  // that site. 1 on a quiet machine.
  double lowest_kept_fraction = -1;
  std::string lowest_kept_site;
};

// Between: the figures of the interval from `begin` to `end` (load,
// cpus and the kept fractions are the caller's to fill in, except
// load_average_begin and cpus, taken from `begin`).
ContentionFigures Between(const ContentionSnapshot& begin, const ContentionSnapshot& end);

// Snapshot: reads /proc/stat, /proc/loadavg, the online CPU list and
// getrusage now. What cannot be read is left at its "unknown" value.
ContentionSnapshot Snapshot();

// ReadLoadAverage: /proc/loadavg's 1-minute figure now, -1 when unreadable.
double ReadLoadAverage();

// ApplyTestContention: the test seam RLSCOPE_CALIBRATE_TEST_CONTENTION
// ("steal=0.3,load=12,other_busy=1.5"): overrides measured
// figures so tests can show the verdict's reactions deterministically.
// For tests only; empty or unset changes nothing. Returns an error naming
// the malformed part.
inline constexpr char kTestContentionEnv[] = "RLSCOPE_CALIBRATE_TEST_CONTENTION";
absl::Status ApplyTestContention(std::string_view setting, ContentionFigures& figures);

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_CONTENTION_H_
