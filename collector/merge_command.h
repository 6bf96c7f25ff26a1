// `rlscope merge DIR... [--out JOB]`: several nodes' runs of one
// distributed job (each made by its node's `rlscope run` and analysed
// there) shown as one job: report/job_merge.h.
#ifndef RLSCOPE_COLLECTOR_MERGE_COMMAND_H_
#define RLSCOPE_COLLECTOR_MERGE_COMMAND_H_

#include <string>
#include <vector>

namespace rlscope::collector {

int MergeCommandMain(const std::vector<std::string>& args);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_MERGE_COMMAND_H_
