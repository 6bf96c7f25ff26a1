// JobDirectory: a merged job's directory (`rlscope merge --out JOB`) read
// back. Besides job.json and job.txt it holds a copy of every node's
// report.json (JOB/nodes/N/report.json, N from 1 in the merge's order),
// so that `rlscope report`, `diff` and `export` work on the job where the
// nodes' own directories are not (a laptop, after the cluster's scratch
// space is gone). The job is merged again from those copies each time:
// what a newer rlscope computes differently shows without re-running.
#ifndef RLSCOPE_REPORT_JOB_DIRECTORY_H_
#define RLSCOPE_REPORT_JOB_DIRECTORY_H_

#include <string>

#include "absl/status/statusor.h"
#include "report/job_merge.h"

namespace rlscope::report {

// IsJobDirectory: DIR has a job.json and no trace/ (a run directory never
// has the former; a job directory never the latter).
bool IsJobDirectory(const std::string& dir);

// NodeCopyDir: where the merge keeps the n-th (from 0) node's report.json.
std::string NodeCopyDir(const std::string& job_dir, size_t n);

// LoadJobDirectory: the job merged again from JOB's copies, each node
// keeping its label and directory as job.json names them. A node whose
// copy is missing (a job merged before copies were kept) is read from its
// own directory. Errors name the file and what to do: InvalidArgument when
// job.json is not a job of this schema, NotFound when a node's report can
// be found neither in JOB nor in its directory.
absl::StatusOr<MergedJob> LoadJobDirectory(const std::string& job_dir);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_JOB_DIRECTORY_H_
