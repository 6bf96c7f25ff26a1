#include "report/job_merge.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "report/job_ranks.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "report/report_vocabulary.h"
#include "report/run_diff.h"

namespace rlscope::report {

namespace {

// ClockInputOf: a node's clock pairs, and per rank a launcher told (the
// earliest process holding it, as JobsOf takes it) its collectives' ends.
NodeClockInput ClockInputOf(const NodeSummary& node) {
  NodeClockInput input;
  std::set<std::tuple<std::string, int, int>> seen;
  for (const ProcessReport& process : node.report.processes) {
    if (process.begin_unix_ns > 0)
      input.realtime_minus_monotonic_ns.push_back(process.begin_unix_ns - process.begin_ns);
    const LauncherRank& rank = process.rank;
    if (rank.launcher.empty() || !seen.emplace(rank.launcher, rank.world_size, rank.rank).second) continue;
    RankCollectiveEnds ends{rank.launcher, rank.world_size, rank.rank, {}};
    for (const CollectiveCall& call : process.collectives)
      ends.ends_ns.push_back(call.queued ? kQueuedEnd : call.end_ns);
    input.ranks.push_back(std::move(ends));
  }
  return input;
}

// MergedIds: a process id of its own for each (node, pid), as pids repeat
// across hosts, and the way back. Ids start at 2: a parent of 0 or 1 (none,
// init) keeps its meaning.
class MergedIds {
 public:
  int Of(size_t node, int pid) {
    const auto [it, added] = ids_.try_emplace({node, pid}, static_cast<int>(back_.size()) + kFirst);
    if (added) back_.push_back({node, pid});
    return it->second;
  }
  std::pair<size_t, int> Back(int id) const { return back_[static_cast<size_t>(id - kFirst)]; }

 private:
  static constexpr int kFirst = 2;
  std::map<std::pair<size_t, int>, int> ids_;
  std::vector<std::pair<size_t, int>> back_;
};

std::string OffsetText(int64_t ns) { return absl::StrFormat("%+.6f s", static_cast<double>(ns) / 1e9); }

std::string ClockText(const MergedJob& job, size_t n) {
  const NodeClock& clock = job.clocks[n];
  const std::string& reference = job.labels.front();
  switch (clock.by) {
    case NodeClock::By::kReference: return "the reference clock";
    case NodeClock::By::kCollectives: {
      std::string text = absl::StrFormat(
          "%s to %s's (standard error %s), by the ends of %d collectives both nodes' ranks issued (half of the "
          "per-collective estimates within %s of it)",
          OffsetText(clock.offset_ns), reference, FormatDuration(clock.uncertainty_ns), clock.collectives,
          FormatDuration(clock.spread_ns));
      if (clock.via) {
        text = absl::StrFormat(
            "%s; it shares no job with %s's ranks, so the collectives were those it shares with node %s, whose "
            "clock was aligned first: the offsets add, and so do their errors",
            text, reference, job.labels[*clock.via]);
      }
      if (clock.drift != 0) {
        text += absl::StrFormat(
            ", at the collectives' median time; it drifts by %+.2f parts per million (%s an hour), as the first and "
            "second halves of the collectives differ by more than their noise",
            clock.drift * 1e6, FormatDuration(std::llabs(std::llround(clock.drift * 3.6e12))));
      }
      if (clock.coarse_offset_ns) {
        text += absl::StrFormat("; the hosts' real-time clocks alone said %s (%s apart)",
                                OffsetText(*clock.coarse_offset_ns),
                                FormatDuration(std::llabs(*clock.coarse_offset_ns - clock.offset_ns)));
      }
      return text;
    }
    case NodeClock::By::kRealtime:
      return absl::StrFormat(
          "%s to %s's, by the hosts' real-time clocks only (no collectives lined up with %s's ranks): times across "
          "the nodes are as exact as those clocks agree (NTP: often about a millisecond)",
          OffsetText(clock.offset_ns), reference, reference);
    case NodeClock::By::kNothing: break;
  }
  return absl::StrFormat(
      "not aligned: no clock pair and no collectives lined up with %s's ranks; waits across the nodes are meaningless",
      reference);
}

// MergeRunFigures: the job's own figures from its nodes'. The nodes ran at
// once, so the job's wall time (profiled, corrected, captured) is its
// longest node's; the command shown is the first node's; the exit status
// the first node's that failed. The job is corrected only when every node
// is (a mix is one of the merge's problems).
void MergeRunFigures(const std::vector<NodeSummary>& nodes, RunReport& merged) {
  merged.metadata.command = nodes.front().command;
  merged.corrected = true;
  for (const NodeSummary& node : nodes) {
    const RunReport& run = node.report;
    merged.metadata.wall_ns = std::max(merged.metadata.wall_ns, run.metadata.wall_ns);
    if (merged.metadata.exit_code == 0) merged.metadata.exit_code = run.metadata.exit_code;
    merged.corrected = merged.corrected && node.corrected && run.corrected_wall_ns.has_value();
    if (run.corrected_wall_ns)
      merged.corrected_wall_ns = std::max(merged.corrected_wall_ns.value_or(0), *run.corrected_wall_ns);
    merged.windowed = merged.windowed || run.windowed;
    merged.captured_ns = std::max(merged.captured_ns, run.windowed ? run.captured_ns : run.metadata.wall_ns);
  }
  if (!merged.corrected) merged.corrected_wall_ns.reset();
  if (!merged.windowed) merged.captured_ns = 0;
  merged.steps = StepsOf(merged, kStepOperation);
}

}  // namespace

MergedJob MergeNodes(std::vector<NodeSummary> nodes) {
  MergedJob job;
  std::vector<std::string> dirs;
  std::vector<NodeClockInput> inputs;
  for (const NodeSummary& node : nodes) {
    dirs.push_back(node.dir);
    inputs.push_back(ClockInputOf(node));
  }
  job.labels = RunLabels(dirs);
  job.clocks = AlignClocks(inputs);
  job.nodes = std::move(nodes);
  MergedIds ids;
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    const NodeClock& clock = job.clocks[n];
    for (const BreakdownRow& row : job.nodes[n].report.rows) {
      BreakdownRow& merged = job.merged.rows.emplace_back(row);
      merged.pid = ids.Of(n, row.pid);
    }
    for (const ProcessReport& process : job.nodes[n].report.processes) {
      ProcessReport& merged = job.merged.processes.emplace_back(process);
      merged.pid = ids.Of(n, process.pid);
      merged.ppid = process.ppid <= 1 ? process.ppid : ids.Of(n, process.ppid);
      merged.begin_ns = clock.ToReference(process.begin_ns);
      merged.end_ns = clock.ToReference(process.end_ns);
      for (CollectiveCall& call : merged.collectives) {
        call.begin_ns = clock.ToReference(call.begin_ns);
        call.end_ns = clock.ToReference(call.end_ns);
      }
    }
  }
  MergeRunFigures(job.nodes, job.merged);
  job.merged.jobs = JobsOf(job.merged);
  bool spans_nodes = false;
  for (JobReport& merged : job.merged.jobs) {
    std::set<size_t> on_nodes;
    for (JobReport::Rank& rank : merged.ranks) {
      const auto [node, pid] = ids.Back(rank.pid);
      rank.pid = pid;
      rank.node = job.labels[node];
      on_nodes.insert(node);
    }
    if (merged.parent_pid > 1) merged.parent_pid = ids.Back(merged.parent_pid).second;
    spans_nodes = spans_nodes || on_nodes.size() > 1;
  }
  if (!spans_nodes) {
    job.problems.push_back(
        "No job has ranks on more than one node. Ranks join across nodes when their launcher told them (torchrun, "
        "mpirun, srun: a rank and a world size in the environment); workers told by the process tree stay within "
        "their node.");
  }
  size_t corrected = 0;
  for (const NodeSummary& node : job.nodes) corrected += node.corrected;
  if (corrected != 0 && corrected != job.nodes.size()) {
    job.problems.push_back(
        "Some nodes' reports are corrected for profiling overhead and some are not: their times do not compare. "
        "Calibrate each node ('rlscope calibrate') and run 'rlscope report' again.");
  }
  for (size_t n = 1; n < job.nodes.size(); ++n) {
    const NodeClock& clock = job.clocks[n];
    if (clock.by == NodeClock::By::kCollectives && clock.coarse_offset_ns &&
        std::llabs(*clock.coarse_offset_ns - clock.offset_ns) > kRealtimeDisagreementNs) {
      job.problems.push_back(absl::StrFormat(
          "Node %s's clock offset by the collectives (%s) and by the hosts' real-time clocks (%s) differ by %s. "
          "Where the hosts' clocks are synchronised (NTP), the k-th collectives of the two nodes may not be one "
          "collective (for instance capture windows that opened at different points of the training), and the "
          "waits across the nodes are then wrong.",
          job.labels[n], OffsetText(clock.offset_ns), OffsetText(*clock.coarse_offset_ns),
          FormatDuration(std::llabs(*clock.coarse_offset_ns - clock.offset_ns))));
    }
    if (job.clocks[n].by == NodeClock::By::kNothing) {
      job.problems.push_back(absl::StrFormat("Node %s's clock could not be aligned with %s's: %s.", job.labels[n],
                                             job.labels.front(), ClockText(job, n)));
    }
  }
  return job;
}

std::string FormatJobJson(const MergedJob& job) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    const NodeClock& clock = job.clocks[n];
    const bool refined = clock.by == NodeClock::By::kCollectives;
    nodes.push_back(
        {{"label", job.labels[n]},
         {"dir", job.nodes[n].dir},
         {"command", job.nodes[n].command},
         {"corrected", job.nodes[n].corrected},
         {"processes", job.nodes[n].report.processes.size()},
         {"clock",
          {{"aligned_by", AlignedBy(clock.by)},
           {"offset_ns", clock.offset_ns},
           {"coarse_offset_ns",
            clock.coarse_offset_ns ? nlohmann::ordered_json(*clock.coarse_offset_ns) : nlohmann::ordered_json()},
           {"collectives", clock.collectives},
           {"via", refined && clock.via ? nlohmann::ordered_json(job.labels[*clock.via]) : nlohmann::ordered_json()},
           {"anchor_ns", refined ? nlohmann::ordered_json(clock.anchor_ns) : nlohmann::ordered_json()},
           {"drift_ppm", refined ? nlohmann::ordered_json(clock.drift * 1e6) : nlohmann::ordered_json()},
           {"spread_ns", refined ? nlohmann::ordered_json(clock.spread_ns) : nlohmann::ordered_json()},
           {"uncertainty_ns", refined ? nlohmann::ordered_json(clock.uncertainty_ns) : nlohmann::ordered_json()}}}});
  }
  const nlohmann::ordered_json json = {
      {"schema", kJobSchema}, {"nodes", std::move(nodes)}, {"jobs", JobsJson(job.merged)}, {"problems", job.problems}};
  return json.dump(2) + "\n";
}

std::string FormatJobText(const MergedJob& job) {
  std::string out = absl::StrFormat("rlscope merge: %d nodes, %d job(s) over them; times on %s's clock\n",
                                    job.nodes.size(), job.merged.jobs.size(), job.labels.front());
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    const NodeSummary& node = job.nodes[n];
    out +=
        absl::StrFormat("  node %s (%s): %s; %d process(es), %s\n", job.labels[n], node.dir,
                        FormatCommandLine(node.command), node.report.processes.size(),
                        node.corrected ? "corrected for profiling overhead" : "NOT corrected for profiling overhead");
    out += "    clock: " + ClockText(job, n) + "\n";
  }
  for (const JobReport& merged : job.merged.jobs) {
    // The tables name ranks by number only; pids repeat across hosts.
    std::map<std::string, std::vector<std::string>> ranks_on;
    for (const JobReport::Rank& rank : merged.ranks) {
      ranks_on[rank.node].push_back(absl::StrFormat("%d (pid %d)", rank.rank, rank.pid));
    }
    std::vector<std::string> placed;
    for (const auto& [node, ranks] : ranks_on) placed.push_back(node + ": " + absl::StrJoin(ranks, ", "));
    out += absl::StrFormat("  ranks of the %s job by node: %s\n", merged.launcher, absl::StrJoin(placed, "; "));
  }
  out += FormatJobsText(job.merged, "job.json");
  if (!job.problems.empty()) {
    out += "\nproblems:\n";
    for (const std::string& problem : job.problems) out += "  - " + problem + "\n";
  }
  return out;
}

}  // namespace rlscope::report
