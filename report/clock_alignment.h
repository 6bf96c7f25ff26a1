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
//     collectives. Two hosts' clocks also run at slightly different rates
//     (NTP keeps them within about a part per million; a free-running
//     quartz is off by tens): over an hour's run that moves the offset by
//     milliseconds. So where the first half's and the second half's
//     offsets differ by more than 3 standard errors, the offset is a line
//     through the collectives' time (drift), else one number.
// A node that shares no job with the reference but does with a node
// already aligned is aligned through it (an actor fleet on nodes 1-2 and a
// learner job on nodes 0-1): the refined offsets compose. Only a node that
// is linked to the reference by no chain of shared jobs falls back to the
// coarse offset.
#ifndef RLSCOPE_REPORT_CLOCK_ALIGNMENT_H_
#define RLSCOPE_REPORT_CLOCK_ALIGNMENT_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlscope::report {

// RankCollectiveEnds::ends_ns of a queued collective (CollectiveCall::
// queued): it ended when the rank queued it, not when the ranks met, so it
// keeps its place in the line-up but aligns nothing.
inline constexpr int64_t kQueuedEnd = INT64_MIN;

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
  // Add to the node's times to put them on the reference node's clock
  // (ToReference): offset_ns at anchor_ns (a time on the node's clock, the
  // collectives' median), plus drift x the time since.
  int64_t offset_ns = 0;
  int64_t anchor_ns = 0;
  double drift = 0;  // kCollectives: reference ns gained per node ns (1e-6: a part per million); 0: none found.
  std::optional<int64_t> coarse_offset_ns;  // By the clock pairs; none when a node has no pair.
  enum class By { kReference, kCollectives, kRealtime, kNothing } by = By::kNothing;
  size_t collectives = 0;  // kCollectives: how many lined-up ones aligned it (queued ones do not).
  int64_t spread_ns = 0;   // kCollectives: median distance of the per-collective estimates to the offset.
  // kCollectives: the offset's standard error, were the estimates' scatter
  // normal: 1.2533 (a median's) x 1.4826 x spread_ns (sigma from the
  // median distance) / sqrt(collectives). On a quiet machine with cores to
  // spare the ends scatter by microseconds; where ranks wait for a CPU
  // after a collective (the 2-core build machine, 4 ranks) by milliseconds.
  int64_t uncertainty_ns = 0;
  // kCollectives: the node (its index) whose clock this one was aligned
  // through, when it shares no lined-up job with the reference but does
  // with a node that was aligned (directly or through another): the two
  // offsets (and drifts) compose, their standard errors add in quadrature.
  // None: aligned with the reference directly.
  std::optional<size_t> via;

  int64_t ToReference(int64_t ns) const {
    return ns + offset_ns + static_cast<int64_t>(std::llround(drift * static_cast<double>(ns - anchor_ns)));
  }
};

// At least this many lined-up collectives in each half to look for drift.
inline constexpr size_t kMinCollectivesPerHalf = 8;
// A drift beyond this (100 parts per million) is taken for noise.
inline constexpr double kMaxDrift = 1e-4;
// Where the collectives and the real-time clocks disagree by more than
// this, the merge says so (job_merge.h): synchronised hosts agree to a
// millisecond or so, and the k-th collectives of two nodes may not be one
// collective (capture windows that opened at different points).
inline constexpr int64_t kRealtimeDisagreementNs = 10'000'000;

// AlignClocks: one entry per node, the first the reference.
std::vector<NodeClock> AlignClocks(const std::vector<NodeClockInput>& nodes);

// AlignedBy: "reference", "collectives", "realtime" or "none" (job.json).
const char* AlignedBy(NodeClock::By by);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_CLOCK_ALIGNMENT_H_
