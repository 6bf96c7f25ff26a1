#include "report/report_tables.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "report/category.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

CellTable TransitionCells(const ProcessReport& process, std::string_view arrow, size_t max_rows) {
  std::map<std::string, std::map<std::string, double>> per_instance;
  std::map<std::string, uint64_t> instances, counts;
  std::set<std::string> columns;
  for (const TransitionRow& row : process.transitions) {
    const std::string column = absl::StrFormat("%s%s%s", CategoryName(row.from), arrow, CategoryName(row.to));
    const uint64_t divisor = row.operation_instances > 0 ? row.operation_instances : 1;
    per_instance[row.operation][column] += static_cast<double>(row.count) / static_cast<double>(divisor);
    instances[row.operation] = row.operation_instances;
    counts[row.operation] += row.count;
    columns.insert(column);
  }
  std::vector<std::string> operations;
  for (const auto& [operation, count] : counts) operations.push_back(operation);
  std::stable_sort(operations.begin(), operations.end(),
                   [&](const std::string& a, const std::string& b) { return counts[a] > counts[b]; });
  CellTable table;
  table.header = {"operation", "instances"};
  table.header.insert(table.header.end(), columns.begin(), columns.end());
  table.total_rows = operations.size();
  for (size_t i = 0; i < operations.size() && i < max_rows; ++i) {
    const std::string& operation = operations[i];
    std::vector<std::string> line = {operation, instances[operation] > 0 ? FormatCount(instances[operation]) : "-"};
    for (const std::string& column : columns) {
      const auto it = per_instance[operation].find(column);
      line.push_back(it == per_instance[operation].end() ? "-" : absl::StrFormat("%.1f", it->second));
    }
    table.rows.push_back(std::move(line));
  }
  return table;
}

CellTable InstanceCells(const ProcessReport& process, uint64_t steps, size_t max_rows) {
  CellTable table;
  table.header = {"operation", "instances", "mean", "p50", "p95", "max"};
  if (steps > 0) table.header.push_back("per step");
  table.total_rows = process.instance_stats.size();
  for (size_t i = 0; i < process.instance_stats.size() && i < max_rows; ++i) {
    const InstanceStats& stats = process.instance_stats[i];
    table.rows.push_back({stats.operation, FormatCount(stats.instances), FormatDuration(stats.mean_ns),
                          FormatDuration(stats.p50_ns), FormatDuration(stats.p95_ns), FormatDuration(stats.max_ns)});
    if (steps > 0) table.rows.back().push_back(FormatDuration(stats.total_ns / static_cast<int64_t>(steps)));
  }
  return table;
}

CellTable JobCells(const JobReport& job, size_t max_rank_columns, size_t max_rows) {
  CellTable table;
  const bool each = job.ranks.size() <= max_rank_columns;
  table.header = {"operation", "all ranks"};
  if (each) {
    for (const JobReport::Rank& rank : job.ranks) table.header.push_back(absl::StrFormat("rank %d", rank.rank));
  } else {
    table.header.insert(table.header.end(), {"min rank", "median rank", "max rank"});
  }
  table.header.push_back("slowest");
  table.total_rows = job.operations.size();
  for (const JobReport::Operation& operation : job.operations) {
    if (table.rows.size() >= max_rows) break;
    std::vector<std::string> row = {operation.operation, FormatDuration(operation.total_ns)};
    if (each) {
      for (int64_t ns : operation.per_rank_ns) row.push_back(ns > 0 ? FormatDuration(ns) : "-");
    } else {
      std::vector<int64_t> sorted = operation.per_rank_ns;
      std::sort(sorted.begin(), sorted.end());
      row.insert(row.end(), {FormatDuration(sorted.front()), FormatDuration(sorted[sorted.size() / 2]),
                             FormatDuration(sorted.back())});
    }
    row.push_back(job.ranks.size() < 2 ? "-"
                                       : absl::StrFormat("rank %d, %.2fx the mean", job.ranks[operation.slowest].rank,
                                                         operation.slowest_over_mean));
    table.rows.push_back(std::move(row));
  }
  return table;
}

CellTable JobCommunicationCells(const JobReport& job, size_t max_rows) {
  CellTable table;
  const JobReport::Communication& communication = job.communication;
  int64_t total = 0;
  for (int64_t ns : communication.per_rank_ns) total += ns;
  if (total <= 0 && !communication.lined_up) return table;
  table.header = {"rank", "Communication"};
  if (communication.lined_up) table.header.insert(table.header.end(), {"waiting for others", "last to arrive"});
  std::vector<size_t> order(job.ranks.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = r;
  if (communication.lined_up) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return communication.per_rank_wait_ns[a] < communication.per_rank_wait_ns[b];
    });
  }
  table.total_rows = order.size();
  for (size_t r : order) {
    if (table.rows.size() >= max_rows) break;
    const int64_t ns = communication.per_rank_ns[r];
    std::vector<std::string> row = {absl::StrFormat("rank %d", job.ranks[r].rank), FormatDuration(ns)};
    if (communication.lined_up) {
      const int64_t wait = communication.per_rank_wait_ns[r];
      row.push_back(ns > 0 ? absl::StrFormat("%s (%.0f%%)", FormatDuration(wait),
                                             100.0 * static_cast<double>(wait) / static_cast<double>(ns))
                           : FormatDuration(wait));
      row.push_back(absl::StrFormat("%s of %s", FormatCount(communication.per_rank_last[r]),
                                    FormatCount(communication.collectives)));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string JobCommunicationNote(const JobReport& job) {
  const JobReport::Communication& communication = job.communication;
  if (communication.lined_up) {
    return absl::StrFormat(
        "Communication between the ranks (torch.distributed, MPI, NCCL calls), %s collectives per rank lined up in "
        "the order issued: waiting is from a rank's arrival at a collective to the last rank's, the rest is the "
        "transfer itself; the rank that arrives last most often is the straggler.",
        FormatCount(communication.collectives));
  }
  if (!communication.not_lined_up.empty()) {
    return "Communication between the ranks (torch.distributed, MPI, NCCL calls); waiting for other ranks is not "
           "told: " +
           communication.not_lined_up + ".";
  }
  if (JobCommunicated(job)) {
    return "Communication between the ranks (MPI, NCCL calls); no collectives from Python to line up.";
  }
  return "";
}

bool JobCommunicated(const JobReport& job) {
  return std::any_of(job.communication.per_rank_ns.begin(), job.communication.per_rank_ns.end(),
                     [](int64_t ns) { return ns > 0; });
}

std::string JobTitle(const JobReport& job) {
  if (job.launcher == "process tree") {
    // Siblings that never communicate are workers (a vector env's, a
    // pool's), not ranks of a distributed job: said so, as a user running
    // SubprocVecEnv would otherwise read "4 ranks" and wonder which job.
    if (!JobCommunicated(job)) {
      return absl::StrFormat(
          "%d worker processes of process %d, one command (by the process tree; no communication between them, as a "
          "vector env's or a pool's workers; numbered as ranks by start order): %s",
          job.ranks.size(), job.parent_pid, job.command);
    }
    return absl::StrFormat("%d ranks by the process tree (children of process %d, one command): %s", job.ranks.size(),
                           job.parent_pid, job.command);
  }
  const std::string missing = static_cast<int>(job.ranks.size()) < job.world_size
                                  ? absl::StrFormat(", %d of them traced", job.ranks.size())
                                  : "";
  return absl::StrFormat("%d ranks of %s (world size %d%s): %s", job.ranks.size(), job.launcher, job.world_size,
                         missing, job.command);
}

}  // namespace rlscope::report
