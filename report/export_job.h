// Exports of a merged job (`rlscope export JOB`, job_directory.h). A job
// holds its nodes' reports, not their traces, so it exports what those
// hold:
//
// WriteJobCsv: every node's breakdown rows, RFC 4180 as export_csv.h, one
// header line then a line per row:
//   view,node,process,operation,resource,category,ns
// node: the node's label; process: its pid on that node; view "corrected"
// or "uncorrected" as each node's report was (a job mixing them says so in
// `rlscope report JOB`).
//
// WriteJobChromeTrace: Chrome trace event JSON of the job on the first
// node's clock: a process per (node, pid), named "LABEL pid P" (and its
// rank, where a launcher told one), with a "process" slice over its traced
// life and, on a "collectives" thread, a slice per collective named by the
// operation it was issued in. ts/dur in microseconds from the earliest
// process start of any node. The ranks' waits for the last one line up
// across nodes: what the straggler view summarises, one call at a time.
#ifndef RLSCOPE_REPORT_EXPORT_JOB_H_
#define RLSCOPE_REPORT_EXPORT_JOB_H_

#include <ostream>

#include "report/job_merge.h"

namespace rlscope::report {

void WriteJobCsv(const MergedJob& job, std::ostream& out);
void WriteJobChromeTrace(const MergedJob& job, std::ostream& out);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_JOB_H_
