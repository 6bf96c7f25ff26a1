// ClockAlignment: how the clocks of several nodes' runs relate, so one
// job's ranks on different hosts can be lined up (job_merge.h).
//
// Every time in a node's run is on that host's CLOCK_MONOTONIC, whose zero
// is the host's boot: two hosts' clocks differ by seconds to days. Two
// estimates of a node's offset to the reference node (the first):
//   - coarse: each process records CLOCK_REALTIME and CLOCK_MONOTONIC at one
//     instant (its start); the difference of the two nodes' (realtime -
//     monotonic) is the offset, to within how well the hosts' real-time
//     clocks agree (NTP: often about a millisecond, unbounded without it);
//   - refined: a collective cannot complete on any rank before its last
//     member arrives, and completes on all of them within a message's
//     latency of one another. So the k-th collective's end on the reference
//     node's ranks minus its end on this node's ranks is the offset, give
//     or take that latency and scheduling noise; the median over many
//     collectives keeps that small. Used when both nodes hold ranks of one
//     job (told by the launcher) that issued one number (>= 3) of
//     collectives.
#ifndef RLSCOPE_REPORT_CLOCK_ALIGNMENT_H_
#define RLSCOPE_REPORT_CLOCK_ALIGNMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlscope::report {

// One rank on a node: its job's key and its collectives' ends, in order.
struct RankCollectiveEnds {
  std::string launcher;
  int world_size = 0;
  int rank = 0;
  std::vector<int64_t> ends_ns;
};

struct NodeClockInput {
  // Per process with a clock pair: CLOCK_REALTIME - CLOCK_MONOTONIC.
  std::vector<int64_t> realtime_minus_monotonic_ns;
  std::vector<RankCollectiveEnds> ranks;
};

// At least this many lined-up collectives refine an offset.
inline constexpr size_t kMinCollectivesToAlign = 3;

struct NodeClock {
  // Add to the node's times to put them on the reference node's clock.
  int64_t offset_ns = 0;
  std::optional<int64_t> coarse_offset_ns;  // By the clock pairs; none when a node has no pair.
  enum class By { kReference, kCollectives, kRealtime, kNothing } by = By::kNothing;
  size_t collectives = 0;  // kCollectives: how many were lined up.
  int64_t spread_ns = 0;   // kCollectives: median distance of the per-collective estimates to the offset.
  // kCollectives: the offset's standard error, were the estimates' scatter
  // normal: 1.2533 (a median's) x 1.4826 x spread_ns (sigma from the
  // median distance) / sqrt(collectives). On a quiet machine with cores to
  // spare the ends scatter by microseconds; where ranks wait for a CPU
  // after a collective (the 2-core build machine, 4 ranks) by milliseconds.
  int64_t uncertainty_ns = 0;
};

// AlignClocks: one entry per node, the first the reference.
std::vector<NodeClock> AlignClocks(const std::vector<NodeClockInput>& nodes);

// AlignedBy: "reference", "collectives", "realtime" or "none" (job.json).
const char* AlignedBy(NodeClock::By by);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_CLOCK_ALIGNMENT_H_
