#include "report/job_ranks.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/run_report.h"

namespace rlscope::report {

std::string NumbersAside(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
      while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

namespace {

std::string CommandKey(const ProcessReport& process) {
  std::vector<std::string> words;
  words.reserve(process.argv.size());
  for (const std::string& word : process.argv) words.push_back(NumbersAside(word));
  return absl::StrJoin(words, "\x1f");
}

// RankOfPid: pid -> index in job.ranks, so the rows are read in one pass
// (a job of hundreds of ranks must not scan them once per rank).
using RankOfPid = absl::flat_hash_map<int, size_t>;

RankOfPid RanksByPid(const JobReport& job) {
  RankOfPid rank_of_pid;
  for (size_t r = 0; r < job.ranks.size(); ++r) rank_of_pid.emplace(job.ranks[r].pid, r);
  return rank_of_pid;
}

// FillOperations: each rank's CPU-side time per operation, from the rows.
void FillOperations(const RunReport& report, const RankOfPid& rank_of_pid, JobReport& job) {
  std::map<std::string, std::vector<int64_t>> per_rank;
  for (const BreakdownRow& row : report.rows) {
    if (row.resource == Resource::kGpu || row.category == Category::kWait) continue;
    const auto rank = rank_of_pid.find(row.pid);
    if (rank == rank_of_pid.end()) continue;
    std::vector<int64_t>& times = per_rank[row.operation];
    times.resize(job.ranks.size());
    times[rank->second] += row.ns;
  }
  for (auto& [operation, times] : per_rank) {
    JobReport::Operation entry;
    entry.operation = operation;
    entry.per_rank_ns = std::move(times);
    for (int64_t ns : entry.per_rank_ns) entry.total_ns += ns;
    entry.slowest = static_cast<size_t>(std::max_element(entry.per_rank_ns.begin(), entry.per_rank_ns.end()) -
                                        entry.per_rank_ns.begin());
    const double mean = static_cast<double>(entry.total_ns) / static_cast<double>(entry.per_rank_ns.size());
    entry.slowest_over_mean = mean > 0 ? static_cast<double>(entry.per_rank_ns[entry.slowest]) / mean : 0;
    job.operations.push_back(std::move(entry));
  }
  std::sort(job.operations.begin(), job.operations.end(),
            [](const JobReport::Operation& a, const JobReport::Operation& b) {
              return std::tie(b.total_ns, a.operation) < std::tie(a.total_ns, b.operation);
            });
}

// FillCommunication: the ranks' Communication time and, lined up
// collective by collective, their waits for the last to arrive.
void FillCommunication(const RunReport& report, const RankOfPid& rank_of_pid, JobReport& job) {
  JobReport::Communication& communication = job.communication;
  const size_t ranks = job.ranks.size();
  communication.per_rank_ns.assign(ranks, 0);
  // Per operation too: a wait in an operation is at most its time there.
  absl::flat_hash_map<std::string, std::vector<int64_t>> per_operation_ns;
  for (const BreakdownRow& row : report.rows) {
    if (row.category != Category::kCommunication || row.resource == Resource::kGpu) continue;
    if (const auto rank = rank_of_pid.find(row.pid); rank != rank_of_pid.end()) {
      communication.per_rank_ns[rank->second] += row.ns;
      std::vector<int64_t>& in_operation = per_operation_ns[row.operation];
      in_operation.resize(ranks, 0);
      in_operation[rank->second] += row.ns;
    }
  }
  std::vector<const ProcessReport*> processes;
  size_t fewest = SIZE_MAX, most = 0;
  for (const JobReport::Rank& rank : job.ranks) {
    processes.push_back(&report.processes[rank.process]);
    fewest = std::min(fewest, processes.back()->collectives.size());
    most = std::max(most, processes.back()->collectives.size());
  }
  if (most == 0) return;
  if (fewest != most) {
    communication.not_lined_up = absl::StrFormat(
        "the ranks issued different numbers of collectives (%d to %d), so they cannot be lined up", fewest, most);
    return;
  }
  communication.lined_up = true;
  communication.collectives = most;
  communication.per_rank_wait_ns.assign(ranks, 0);
  communication.per_rank_last.assign(ranks, 0);
  absl::flat_hash_map<std::string, size_t> operation_index;
  for (size_t i = 0; i < job.operations.size(); ++i) operation_index.emplace(job.operations[i].operation, i);
  for (size_t k = 0; k < most; ++k) {
    size_t last = 0;
    for (size_t r = 1; r < ranks; ++r) {
      if (processes[r]->collectives[k].begin_ns > processes[last]->collectives[k].begin_ns) last = r;
    }
    ++communication.per_rank_last[last];
    const int64_t last_arrival = processes[last]->collectives[k].begin_ns;
    for (size_t r = 0; r < ranks; ++r) {
      const CollectiveCall& call = processes[r]->collectives[k];
      const int64_t wait = std::clamp<int64_t>(last_arrival - call.begin_ns, 0, call.end_ns - call.begin_ns);
      communication.per_rank_wait_ns[r] += wait;
      const auto& names = processes[r]->collective_operations;
      const auto index = operation_index.find(names[static_cast<size_t>(call.operation)]);
      if (index == operation_index.end()) continue;  // An operation with no CPU-side rows (none left).
      std::vector<int64_t>& waits = job.operations[index->second].per_rank_wait_ns;
      waits.resize(ranks);
      waits[r] += wait;
    }
  }
  // Measured on the recorded clock; a corrected report's Communication
  // time is less by rlscope's cost in it, and a wait is never more: not in
  // an operation, and not in all of them.
  for (JobReport::Operation& operation : job.operations) {
    if (operation.per_rank_wait_ns.empty()) continue;
    const auto in_operation = per_operation_ns.find(operation.operation);
    for (size_t r = 0; r < ranks; ++r) {
      const int64_t most = in_operation == per_operation_ns.end() ? 0 : in_operation->second[r];
      const int64_t excess = std::max<int64_t>(0, operation.per_rank_wait_ns[r] - most);
      operation.per_rank_wait_ns[r] -= excess;
      communication.per_rank_wait_ns[r] -= excess;
    }
  }
  for (size_t r = 0; r < ranks; ++r) {
    communication.per_rank_wait_ns[r] = std::min(communication.per_rank_wait_ns[r], communication.per_rank_ns[r]);
  }
}

}  // namespace

std::vector<JobReport> JobsOf(const RunReport& report) {
  std::vector<JobReport> jobs;
  std::vector<bool> taken(report.processes.size(), false);
  // By the launcher's variables: (launcher, world size) -> rank -> the
  // earliest process holding it (processes are in start order). A job of
  // one rank (srun of one task, torchrun of one process) is none: its
  // processes may still be workers the tree groups.
  std::map<std::pair<std::string, int>, std::map<int, size_t>> told;
  for (size_t i = 0; i < report.processes.size(); ++i) {
    const LauncherRank& rank = report.processes[i].rank;
    if (!rank.launcher.empty()) told[{rank.launcher, rank.world_size}].emplace(rank.rank, i);
  }
  for (const auto& [key, ranks] : told) {
    if (ranks.size() < 2) continue;
    JobReport job;
    job.launcher = key.first;
    job.world_size = key.second;
    for (const auto& [rank, process] : ranks) {
      job.ranks.push_back({rank, report.processes[process].pid, process, {}});
      taken[process] = true;
    }
    jobs.push_back(std::move(job));
  }
  // By the tree: (parent, command numbers aside) -> processes, two or more.
  std::map<std::pair<int, std::string>, std::vector<size_t>> siblings;
  for (size_t i = 0; i < report.processes.size(); ++i) {
    const ProcessReport& process = report.processes[i];
    // Helpers that did no traced work (nvidia-smi, a shell) are no ranks.
    if (taken[i] || process.ppid <= 1 || process.traced_thread_ns <= 0) continue;
    siblings[{process.ppid, CommandKey(process)}].push_back(i);
  }
  for (const auto& [key, members] : siblings) {
    if (members.size() < 2) continue;
    JobReport job;
    job.launcher = "process tree";
    job.parent_pid = key.first;
    job.world_size = static_cast<int>(members.size());
    for (size_t r = 0; r < members.size(); ++r) {
      job.ranks.push_back({static_cast<int>(r), report.processes[members[r]].pid, members[r], {}});
    }
    jobs.push_back(std::move(job));
  }
  for (JobReport& job : jobs) {
    job.command = absl::StrJoin(report.processes[job.ranks.front().process].argv, " ");
    const RankOfPid rank_of_pid = RanksByPid(job);
    FillOperations(report, rank_of_pid, job);
    FillCommunication(report, rank_of_pid, job);
  }
  std::erase_if(jobs, [](const JobReport& job) { return job.operations.empty(); });
  std::sort(jobs.begin(), jobs.end(),
            [](const JobReport& a, const JobReport& b) { return a.ranks.front().process < b.ranks.front().process; });
  return jobs;
}

}  // namespace rlscope::report
