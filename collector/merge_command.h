// `rlscope merge DIR... [--out JOB]`: several nodes' runs of one
// distributed job (each made by its node's `rlscope run` and analysed
// there) shown as one job: report/job_merge.h.
#ifndef RLSCOPE_COLLECTOR_MERGE_COMMAND_H_
#define RLSCOPE_COLLECTOR_MERGE_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "report/job_merge.h"

namespace rlscope::collector {

int MergeCommandMain(const std::vector<std::string>& args);

// WriteNodeCopies: each node's report.json copied to JOB/nodes/N/
// (report/job_directory.h), read again from the node's directory as the
// merge read it.
absl::Status WriteNodeCopies(const std::string& job_dir, const report::MergedJob& job);

// WriteJobFiles: JOB/job.json and JOB/job.txt (`text`), JOB created if
// missing.
absl::Status WriteJobFiles(const std::string& job_dir, const report::MergedJob& job, const std::string& text);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_MERGE_COMMAND_H_
