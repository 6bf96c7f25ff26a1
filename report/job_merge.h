// JobMerge: several nodes' runs of one distributed job made one job view
// (`rlscope merge DIR... --out JOB`). Each node ran its own `rlscope run`
// and `rlscope report`; the merge reads their report.json files
// (node_summary.h), puts every node's times on the first node's clock
// (clock_alignment.h), and computes the job view (job_ranks.h) over all
// their processes: the ranks a launcher told (torchrun, mpirun, srun) join
// across nodes by launcher, world size and rank; ranks told by the
// process tree stay within their node.
//
// Written to JOB: job.json ("rlscope.job/1") and job.txt, the same as what
// `rlscope merge` prints:
//   {"schema": "rlscope.job/1",
//    "nodes": [{"label", "dir", "command", "corrected", "processes",
//               "clock": {"aligned_by": "reference"|"collectives"|"realtime"|"none",
//                         "offset_ns", "coarse_offset_ns"|null,
//                         "anchor_ns"|null, "drift_ppm"|null,  (collectives: the
//                         offset is offset_ns at anchor_ns on the node's clock,
//                         plus drift_ppm x 1e-6 x the time since)
//                         "collectives", "via": LABEL|null (aligned through that
//                         node's clock: it shares no job with the first node),
//                         "spread_ns"|null, "uncertainty_ns"|null}}],
//    "jobs": [as report.json's "jobs", each rank with its "node"],
//    "problems": [...]}
#ifndef RLSCOPE_REPORT_JOB_MERGE_H_
#define RLSCOPE_REPORT_JOB_MERGE_H_

#include <string>
#include <vector>

#include "report/clock_alignment.h"
#include "report/node_summary.h"
#include "report/run_report.h"

namespace rlscope::report {

inline constexpr const char* kJobSchema = "rlscope.job/1";

struct MergedJob {
  std::vector<std::string> labels;  // Per node: its directory's basename (RunLabels).
  std::vector<NodeSummary> nodes;   // As read, times on their own clocks.
  std::vector<NodeClock> clocks;    // Per node.
  // The nodes' rows and processes together, processes on the reference
  // clock, and the jobs found over them (ranks carry their node's label).
  RunReport merged;
  std::vector<std::string> problems;  // What the reader should know.
};

// MergeNodes: `nodes` (two or more, the first the clock reference).
MergedJob MergeNodes(std::vector<NodeSummary> nodes);

std::string FormatJobJson(const MergedJob& job);
std::string FormatJobText(const MergedJob& job);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_JOB_MERGE_H_
