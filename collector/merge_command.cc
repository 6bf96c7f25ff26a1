#include "collector/merge_command.h"

#include <filesystem>
#include <iostream>
#include <set>

#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "collector/file_output.h"
#include "format/input_file.h"
#include "format/run_layout.h"
#include "report/job_directory.h"
#include "report/job_merge.h"
#include "report/node_summary.h"

namespace rlscope::collector {

namespace {

constexpr const char* kMergeUsage =
    R"USAGE(usage: rlscope merge [--out JOB] [--quiet] DIR DIR [DIR...]

Show several nodes' runs of one distributed job as one job. On each node,
profile that node's share with 'rlscope run --out DIR -- LAUNCHER ...' (one
collector per node, as always) and analyse it there ('rlscope run' does,
or 'rlscope report DIR'). Then bring the DIRs' report.json files together
(the traces can stay where they are: only report.json is read) and merge:

  rlscope merge node0/ node1/ --out job/

What it does:
  - joins the ranks across nodes: processes whose launcher (torchrun,
    mpirun, srun) told their rank and world size are ranks of one job by
    launcher, world size and rank, whatever node they ran on; workers told
    by the process tree stay within their node;
  - puts every node's times on the first node's clock. Each host's clock
    starts at its boot, so each node gets an offset: first from the hosts'
    real-time clocks (each process records real time and monotonic time at
    its start; as good as the hosts' clocks agree, about a millisecond
    under NTP), then, where the two nodes hold ranks of one job that
    issued the same number (3 or more) of collectives, from the collectives'
    ends (a collective ends at nearly one instant on every rank): the
    median difference. Where the first and second halves of the
    collectives give offsets further apart than their noise allows (hosts'
    clocks run at slightly different rates: a millisecond or more over an
    hour), the offset is a line through time (drift). A node sharing
    no job with the first node is aligned through one that shares a job
    with both (the offsets composed, their errors added). The output gives
    each offset, how it was found, its drift, how much the per-collective
    estimates scatter and the offset's standard error;
  - shows the job as 'rlscope report' does for one node: per operation the
    time summed over the ranks and per rank, Communication per rank, how
    long each rank waited in collectives for the last to arrive, and the
    straggler, now across nodes.

With --out JOB, the job is kept: 'rlscope report JOB' shows it again
(merged anew from the copies of the nodes' reports JOB keeps, so JOB can
be moved off the cluster), 'rlscope diff' compares it with another job or
a one-node run, 'rlscope export JOB --chrome FILE' draws the ranks'
collectives on one clock and '--csv FILE' gives every node's rows.

options:
  --out JOB     also write JOB/job.json (schema "rlscope.job/1": the nodes,
                their clock offsets, the jobs as in report.json with each
                rank's node), JOB/job.txt (what is printed) and a copy of
                each node's report.json (JOB/nodes/N/report.json, N from 1
                in the order given); JOB is created if missing
  --quiet       do not print the merged job
  -h, --help    show this help

Nodes are labelled by their directory's basename ("#N" appended where
basenames repeat). exit status: 0 merged; 1 a DIR could not be read or JOB
not written; 2 usage error.
)USAGE";

// CopyNodeReport: the node's report.json into JOB (job_directory.h), read
// as the merge read it (a link followed, bounded, never a FIFO).
absl::Status CopyNodeReport(const std::string& node_dir, const std::string& copy_dir) {
  namespace fs = std::filesystem;
  const fs::path from = fs::path(node_dir) / run_layout::kReportJson;
  const fs::path to = fs::path(copy_dir) / run_layout::kReportJson;
  std::error_code error;
  if (fs::equivalent(from, to, error)) return absl::OkStatus();  // Merged from JOB's own copies.
  std::string text, why;
  if (!ReadInputFile(from.string(), report::kMaxNodeReportBytes, Symlinks::kFollow, &text, &why)) {
    return absl::InternalError(absl::StrFormat("cannot read %s again to keep a copy: %s", from.string(), why));
  }
  fs::create_directories(copy_dir, error);
  if (error) return absl::InternalError(absl::StrFormat("cannot create %s: %s", copy_dir, error.message()));
  return ReplaceRunFile(to, text);
}

}  // namespace

absl::Status WriteNodeCopies(const std::string& job_dir, const report::MergedJob& job) {
  for (size_t n = 0; n < job.nodes.size(); ++n) {
    if (absl::Status copied = CopyNodeReport(job.nodes[n].dir, report::NodeCopyDir(job_dir, n)); !copied.ok()) {
      return copied;
    }
  }
  return absl::OkStatus();
}

absl::Status WriteJobFiles(const std::string& job_dir, const report::MergedJob& job, const std::string& text) {
  std::error_code error;
  std::filesystem::create_directories(job_dir, error);
  if (error) return absl::InternalError(absl::StrFormat("cannot create %s: %s", job_dir, error.message()));
  for (const auto& [name, content] :
       {std::pair<const char*, std::string>{run_layout::kJobJson, report::FormatJobJson(job)},
        {run_layout::kJobText, text}}) {
    if (absl::Status written = ReplaceRunFile(std::filesystem::path(job_dir) / name, content); !written.ok()) {
      return written;
    }
  }
  return absl::OkStatus();
}

int MergeCommandMain(const std::vector<std::string>& args) {
  ArgCursor cursor(args);
  std::string out;
  bool quiet = false;
  std::vector<std::string> dirs;
  while (cursor.NextOption(dirs)) {
    const ParsedOption option = cursor.TakeOption();
    if (option.name == "-h" || option.name == "--help") {
      std::cout << kMergeUsage;
      return 0;
    } else if (option.name == "--quiet" || option.name == "-q") {
      quiet = true;
    } else if (option.name == "--out" || option.name == "-o") {
      absl::StatusOr<std::string> value = cursor.TakeValue(option);
      if (!value.ok()) {
        std::cerr << UsageError("merge", std::string(value.status().message())).message() << "\n";
        return 2;
      }
      out = *value;
    } else {
      std::cerr << UsageError("merge", absl::StrFormat("unknown option '%s'", option.name)).message() << "\n";
      return 2;
    }
  }
  if (dirs.size() < 2) {
    std::cerr << UsageError("merge", "give two or more run directories, one per node").message() << "\n";
    return 2;
  }
  std::set<std::filesystem::path> seen;
  for (const std::string& dir : dirs) {
    std::error_code error;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(dir, error);
    if (!error && !seen.insert(canonical).second) {
      std::cerr << UsageError("merge", absl::StrFormat("%s is given twice", dir)).message() << "\n";
      return 2;
    }
  }
  std::vector<report::NodeSummary> nodes;
  for (const std::string& dir : dirs) {
    absl::StatusOr<report::NodeSummary> node = report::ReadNodeSummary(dir);
    if (!node.ok()) {
      std::cerr << "rlscope merge: " << node.status().message() << "\n";
      return 1;
    }
    nodes.push_back(*std::move(node));
  }
  const report::MergedJob job = report::MergeNodes(std::move(nodes));
  const std::string text = report::FormatJobText(job);
  if (!out.empty()) {
    // The copies first, so that a job.json never names a copy that is not there.
    absl::Status written = WriteNodeCopies(out, job);
    if (written.ok()) written = WriteJobFiles(out, job, text);
    if (!written.ok()) {
      std::cerr << "rlscope merge: " << written.message() << "\n";
      return 1;
    }
  }
  if (!quiet) std::cout << text;
  return 0;
}

}  // namespace rlscope::collector
