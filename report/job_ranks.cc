#include "report/job_ranks.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

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

// FillOperations: each rank's CPU-side time per operation, from the rows.
void FillOperations(const RunReport& report, JobReport& job) {
  std::map<std::string, std::vector<int64_t>> per_rank;
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    for (const BreakdownRow& row : report.rows) {
      if (row.pid != job.ranks[r].pid || row.resource == Resource::kGpu || row.category == Category::kWait) continue;
      std::vector<int64_t>& times = per_rank[row.operation];
      times.resize(job.ranks.size());
      times[r] += row.ns;
    }
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
      job.ranks.push_back({rank, report.processes[process].pid, process});
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
      job.ranks.push_back({static_cast<int>(r), report.processes[members[r]].pid, members[r]});
    }
    jobs.push_back(std::move(job));
  }
  for (JobReport& job : jobs) {
    job.command = absl::StrJoin(report.processes[job.ranks.front().process].argv, " ");
    FillOperations(report, job);
  }
  std::erase_if(jobs, [](const JobReport& job) { return job.operations.empty(); });
  std::sort(jobs.begin(), jobs.end(),
            [](const JobReport& a, const JobReport& b) { return a.ranks.front().process < b.ranks.front().process; });
  return jobs;
}

}  // namespace rlscope::report
