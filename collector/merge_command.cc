#include "collector/merge_command.h"

#include <filesystem>
#include <iostream>
#include <set>

#include "absl/strings/str_format.h"
#include "collector/cli_args.h"
#include "collector/file_output.h"
#include "format/run_layout.h"
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
    hour), the offset is a line through time (drift). The output gives
    each offset, how it was found, its drift, how much the per-collective
    estimates scatter and the offset's standard error;
  - shows the job as 'rlscope report' does for one node: per operation the
    time summed over the ranks and per rank, Communication per rank, how
    long each rank waited in collectives for the last to arrive, and the
    straggler, now across nodes.

Not yet: 'rlscope report', 'diff' and 'export' of JOB itself.

options:
  --out JOB     also write JOB/job.json (schema "rlscope.job/1": the nodes,
                their clock offsets, the jobs as in report.json with each
                rank's node) and JOB/job.txt (what is printed); JOB is
                created if missing
  --quiet       do not print the merged job
  -h, --help    show this help

Nodes are labelled by their directory's basename ("#N" appended where
basenames repeat). exit status: 0 merged; 1 a DIR could not be read or JOB
not written; 2 usage error.
)USAGE";

}  // namespace

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
    std::error_code error;
    std::filesystem::create_directories(out, error);
    if (error) {
      std::cerr << "rlscope merge: cannot create " << out << ": " << error.message() << "\n";
      return 1;
    }
    for (const auto& [name, content] :
         {std::pair<const char*, std::string>{run_layout::kJobJson, report::FormatJobJson(job)},
          {run_layout::kJobText, text}}) {
      if (const absl::Status written = ReplaceRunFile(std::filesystem::path(out) / name, content); !written.ok()) {
        std::cerr << "rlscope merge: " << written.message() << "\n";
        return 1;
      }
    }
  }
  if (!quiet) std::cout << text;
  return 0;
}

}  // namespace rlscope::collector
