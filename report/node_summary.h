// NodeSummary: what `rlscope merge` reads of one node's run: its analysed
// report (DIR/report.json, written by `rlscope report DIR` on that node),
// never its traces, so a job of many nodes needs no machine holding every
// trace. Read back: the rows, and per process what the job view and the
// clock alignment need (pid, parent, command, launcher rank, traced time,
// the clock pair at its start, its collectives on the node's clock), and
// what a comparison of jobs needs (transitions, instances).
#ifndef RLSCOPE_REPORT_NODE_SUMMARY_H_
#define RLSCOPE_REPORT_NODE_SUMMARY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/run_report.h"

namespace rlscope::report {

// A node's report.json grows with its ranks' collectives (about 70 bytes
// each): 8 ranks of a million collectives are 560 MB. Far above that, the
// file is not one rlscope wrote.
inline constexpr size_t kMaxNodeReportBytes = size_t{4} << 30;

struct NodeSummary {
  std::string dir;
  std::vector<std::string> command;  // The node's `rlscope run` command.
  bool corrected = false;
  // Filled: the rows; the run's wall time, exit status, corrected wall
  // time and capture windows; per process the fields above, its
  // transitions and its operations' instances (what `rlscope diff` of a
  // merged job compares). Threads, lines and GPU figures are left out.
  RunReport report;
};

// ReadNodeSummary: DIR/report.json read back. Errors: NotFound naming the
// command that makes the file; InvalidArgument when it is no report.json
// of this schema, or one written before reports kept clock pairs.
absl::StatusOr<NodeSummary> ReadNodeSummary(const std::string& dir);

// ParseNodeSummary: the same from the file's text (`dir` for messages).
absl::StatusOr<NodeSummary> ParseNodeSummary(std::string_view text, const std::string& dir);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_NODE_SUMMARY_H_
