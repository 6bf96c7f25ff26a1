// NodeSummary: what `rlscope merge` reads of one node's run: its analysed
// report (DIR/report.json, written by `rlscope report DIR` on that node),
// never its traces, so a job of many nodes needs no machine holding every
// trace. Read back: the rows, and per process what the job view and the
// clock alignment need (pid, parent, command, launcher rank, traced time,
// the clock pair at its start, its collectives on the node's clock).
#ifndef RLSCOPE_REPORT_NODE_SUMMARY_H_
#define RLSCOPE_REPORT_NODE_SUMMARY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/run_report.h"

namespace rlscope::report {

struct NodeSummary {
  std::string dir;
  std::vector<std::string> command;  // The node's `rlscope run` command.
  bool corrected = false;
  // Only rows and processes are filled; in processes only the fields
  // above (threads, lines, GPU figures are left out).
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
