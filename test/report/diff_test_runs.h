// Hand-made analysed runs for the `rlscope diff` tests (run_diff_test.cc,
// diff_html_test.cc): rows and one process (pid 1) without GPU capture.
#ifndef RLSCOPE_TEST_REPORT_DIFF_TEST_RUNS_H_
#define RLSCOPE_TEST_REPORT_DIFF_TEST_RUNS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/run_report.h"

namespace rlscope::report::diff_test {

inline BreakdownRow Row(const char* operation, Category category, int64_t ns, Resource resource = Resource::kCpu,
                        int pid = 1) {
  BreakdownRow row;
  row.pid = pid;
  row.operation = operation;
  row.category = category;
  row.resource = resource;
  row.ns = ns;
  return row;
}

inline RunReport Run(std::vector<BreakdownRow> rows, int64_t wall_ns = 1000,
                     std::vector<std::string> command = {"python3", "train.py"}) {
  RunReport report;
  report.metadata.command = std::move(command);
  report.metadata.wall_ns = wall_ns;
  report.rows = std::move(rows);
  ProcessReport process;
  process.pid = 1;
  process.gpu.status = "unused";
  report.processes.push_back(process);
  return report;
}

}  // namespace rlscope::report::diff_test

#endif  // RLSCOPE_TEST_REPORT_DIFF_TEST_RUNS_H_
