#include "report/clock_alignment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace rlscope::report {

namespace {

int64_t MedianOf(std::vector<int64_t> values) {
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  const int64_t upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const int64_t lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return lower + (upper - lower) / 2;
}

using JobKey = std::pair<std::string, int>;  // Launcher, world size.

// RanksByJob: a node's ranks per job, those that issued `count` collectives.
std::map<JobKey, std::vector<const RankCollectiveEnds*>> RanksByJob(const NodeClockInput& node) {
  std::map<JobKey, std::vector<const RankCollectiveEnds*>> jobs;
  for (const RankCollectiveEnds& rank : node.ranks) jobs[{rank.launcher, rank.world_size}].push_back(&rank);
  return jobs;
}

// LinedUpCount: the number of collectives every one of `ranks` issued, or
// 0 when they differ (then the k-th are not known to be one collective).
size_t LinedUpCount(const std::vector<const RankCollectiveEnds*>& ranks) {
  if (ranks.empty()) return 0;
  const size_t count = ranks.front()->ends_ns.size();
  for (const RankCollectiveEnds* rank : ranks) {
    if (rank->ends_ns.size() != count) return 0;
  }
  return count;
}

// EndsOf: per collective, the median end over `ranks`; kQueuedEnd where
// one rank's is.
std::vector<int64_t> EndsOf(const std::vector<const RankCollectiveEnds*>& ranks, size_t count) {
  std::vector<int64_t> ends(count);
  std::vector<int64_t> at_k;
  for (size_t k = 0; k < count; ++k) {
    at_k.clear();
    for (const RankCollectiveEnds* rank : ranks) at_k.push_back(rank->ends_ns[k]);
    const bool queued = std::find(at_k.begin(), at_k.end(), kQueuedEnd) != at_k.end();
    ends[k] = queued ? kQueuedEnd : MedianOf(at_k);
  }
  return ends;
}

// Location: a sample's median, the median distance to it, and the median's
// standard error: were the scatter normal, 1.2533 x 1.4826 x distance /
// sqrt(n); but the ends of one collective on two ranks can differ in two
// ways (which rank came last), and the median of such a sample can sit
// anywhere between the two (seen: 1.75 ms off with 0.49 ms stated). So the
// error is at least what the order statistics around the median say
// (their 95 % interval, n/2 -+ 0.98 sqrt(n), over 2 x 1.96), which needs
// no shape.
struct Location {
  int64_t median = 0;
  int64_t spread = 0;
  double standard_error = 0;
};

Location Locate(const std::vector<int64_t>& values) {
  Location location;
  std::vector<int64_t> sorted = values;  // For the median and the order statistics around it.
  std::sort(sorted.begin(), sorted.end());
  const size_t middle = sorted.size() / 2;
  location.median =
      sorted.size() % 2 == 1 ? sorted[middle] : sorted[middle - 1] + (sorted[middle] - sorted[middle - 1]) / 2;
  std::vector<int64_t> distances;
  distances.reserve(values.size());
  for (int64_t value : values) distances.push_back(std::llabs(value - location.median));
  location.spread = MedianOf(std::move(distances));
  const double n = static_cast<double>(values.size());
  location.standard_error = 1.2533 * 1.4826 * static_cast<double>(location.spread) / std::sqrt(n);
  const double reach = 0.98 * std::sqrt(n);
  const auto low = static_cast<size_t>(std::max(0.0, std::floor(n / 2 - reach)));
  const auto high = static_cast<size_t>(std::min(n - 1, std::ceil(n / 2 + reach)));
  if (high > low) {
    const double interval = static_cast<double>(sorted[high] - sorted[low]) / (2 * 1.96);
    location.standard_error = std::max(location.standard_error, interval);
  }
  return location;
}

// FitOffset: the offset through `differences` (reference end - node end)
// at the node's `times` (the ends, in order): one number, or a line where
// the two halves' medians differ by more than 3 standard errors.
void FitOffset(const std::vector<int64_t>& times, const std::vector<int64_t>& differences, NodeClock& clock) {
  const size_t count = differences.size();
  clock.anchor_ns = MedianOf(times);
  clock.drift = 0;
  if (count >= 2 * kMinCollectivesPerHalf) {
    const auto half = static_cast<std::ptrdiff_t>(count / 2);
    using Values = std::vector<int64_t>;
    const Location first = Locate(Values(differences.begin(), differences.begin() + half));
    const Location second = Locate(Values(differences.begin() + half, differences.end()));
    const int64_t first_time = MedianOf(Values(times.begin(), times.begin() + half));
    const int64_t second_time = MedianOf(Values(times.begin() + half, times.end()));
    const double gap = static_cast<double>(second.median - first.median);
    const double noise = std::hypot(first.standard_error, second.standard_error);
    if (second_time > first_time && std::abs(gap) > 3 * noise) {
      const double drift = gap / static_cast<double>(second_time - first_time);
      // No clock drifts by 100 parts per million (a cheap quartz: 50); a
      // steeper line is the collectives' noise over a short span.
      if (std::abs(drift) <= kMaxDrift) clock.drift = drift;
    }
  }
  std::vector<int64_t> residuals(count);
  for (size_t k = 0; k < count; ++k) {
    residuals[k] = differences[k] - std::llround(clock.drift * static_cast<double>(times[k] - clock.anchor_ns));
  }
  const Location fit = Locate(residuals);
  clock.offset_ns = fit.median;
  clock.spread_ns = fit.spread;
  clock.uncertainty_ns = std::llround(fit.standard_error);
}

// Refine: `node`'s offset to `reference` by the collectives of the job
// they share with the most lined-up collectives; false when none does.
bool Refine(const NodeClockInput& reference, const NodeClockInput& node, NodeClock& clock) {
  const auto reference_jobs = RanksByJob(reference);
  const auto node_jobs = RanksByJob(node);
  size_t best = 0;
  std::vector<int64_t> differences, times;
  for (const auto& [key, ranks] : node_jobs) {
    const auto shared = reference_jobs.find(key);
    if (shared == reference_jobs.end()) continue;
    const size_t count = LinedUpCount(ranks);
    if (count < kMinCollectivesToAlign || count <= best || LinedUpCount(shared->second) != count) continue;
    const std::vector<int64_t> reference_ends = EndsOf(shared->second, count);
    const std::vector<int64_t> node_ends = EndsOf(ranks, count);
    std::vector<int64_t> job_differences, job_times;
    for (size_t k = 0; k < count; ++k) {
      if (reference_ends[k] == kQueuedEnd || node_ends[k] == kQueuedEnd) continue;
      job_differences.push_back(reference_ends[k] - node_ends[k]);
      job_times.push_back(node_ends[k]);
    }
    if (job_differences.size() < kMinCollectivesToAlign || job_differences.size() <= best) continue;
    best = job_differences.size();
    differences = std::move(job_differences);
    times = std::move(job_times);
  }
  if (best == 0) return false;
  FitOffset(times, differences, clock);
  clock.collectives = best;
  clock.by = NodeClock::By::kCollectives;
  return true;
}

// Compose: `link` (a node's clock to `via`'s) followed by `via` (its clock
// to the reference's), as one line anchored at `link`'s anchor: the offset
// there is both offsets (`via`'s taken where `link` lands on its clock);
// the slopes multiply, (1 + d1)(1 + d2) - 1.
NodeClock Compose(const NodeClock& link, const NodeClock& via, size_t via_index) {
  NodeClock clock = link;
  const int64_t landed = link.anchor_ns + link.offset_ns;
  clock.offset_ns = link.offset_ns + via.offset_ns +
                    static_cast<int64_t>(std::llround(via.drift * static_cast<double>(landed - via.anchor_ns)));
  clock.drift = link.drift + via.drift + link.drift * via.drift;
  clock.uncertainty_ns =
      std::llround(std::hypot(static_cast<double>(link.uncertainty_ns), static_cast<double>(via.uncertainty_ns)));
  clock.via = via_index;
  return clock;
}

}  // namespace

std::vector<NodeClock> AlignClocks(const std::vector<NodeClockInput>& nodes) {
  std::vector<NodeClock> clocks(nodes.size());
  if (nodes.empty()) return clocks;
  std::vector<std::optional<int64_t>> realtime_minus_monotonic(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!nodes[n].realtime_minus_monotonic_ns.empty()) {
      realtime_minus_monotonic[n] = MedianOf(nodes[n].realtime_minus_monotonic_ns);
    }
  }
  clocks[0].by = NodeClock::By::kReference;
  clocks[0].coarse_offset_ns = 0;
  for (size_t n = 1; n < nodes.size(); ++n) {
    if (realtime_minus_monotonic[n] && realtime_minus_monotonic[0]) {
      clocks[n].coarse_offset_ns = *realtime_minus_monotonic[n] - *realtime_minus_monotonic[0];
    }
  }
  // Rounds: first every node sharing a job with the reference, then those
  // sharing one with a node aligned in an earlier round, and so on; within
  // a round the lowest-numbered aligned node is the link. A node aligned
  // through a chain carries the chain's errors, so shorter chains come first.
  std::vector<bool> aligned(nodes.size(), false);
  aligned[0] = true;
  for (bool progress = true; progress;) {
    progress = false;
    const std::vector<bool> before = aligned;
    for (size_t n = 1; n < nodes.size(); ++n) {
      if (aligned[n]) continue;
      for (size_t m = 0; m < nodes.size(); ++m) {
        NodeClock link;
        if (!before[m] || m == n || !Refine(nodes[m], nodes[n], link)) continue;
        link.coarse_offset_ns = clocks[n].coarse_offset_ns;
        clocks[n] = m == 0 ? link : Compose(link, clocks[m], m);
        aligned[n] = progress = true;
        break;
      }
    }
  }
  for (size_t n = 1; n < nodes.size(); ++n) {
    if (aligned[n] || !clocks[n].coarse_offset_ns) continue;
    clocks[n].offset_ns = *clocks[n].coarse_offset_ns;
    clocks[n].by = NodeClock::By::kRealtime;
  }
  return clocks;
}

const char* AlignedBy(NodeClock::By by) {
  switch (by) {
    case NodeClock::By::kReference: return "reference";
    case NodeClock::By::kCollectives: return "collectives";
    case NodeClock::By::kRealtime: return "realtime";
    case NodeClock::By::kNothing: break;
  }
  return "none";
}

}  // namespace rlscope::report
