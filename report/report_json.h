// report.json: the machine-readable report. Other tools read it, so its
// shape is a contract: extend it, never break it.
//
//   {"schema": "rlscope.report/1", "command": [...], "exit_code": N,
//    "wall_ns": N, "corrected": false,
//    "rows": [{"process": PID, "operation": "...", "resource": "CPU",
//              "category": "CUDA API", "ns": N}, ...],
//    "processes": [{"pid", "ppid", "argv", "threads": [{"tid", "rows", ...}],
//                   "instance_stats": [{"operation", "instances", "total_ns",
//                                       "mean_ns", "p50_ns", "p95_ns", "max_ns"}],
//                   "transitions": [{"operation", "from", "to", "count",
//                                    "operation_instances"}],
//                   "python_lines": [{"operation", "code", "line", "ns",
//                                     "calls"}],
//                   "problems", ...}],
//    "per_step": {"operation", "steps", "loop_ns_per_step",
//                 "wall_ns_per_step"},
//    "problems": [...]}
#ifndef RLSCOPE_REPORT_REPORT_JSON_H_
#define RLSCOPE_REPORT_REPORT_JSON_H_

#include <string>

#include "nlohmann/json.hpp"
#include "report/run_report.h"

namespace rlscope::report {

inline constexpr const char* kReportSchema = "rlscope.report/1";

std::string FormatReportJson(const RunReport& report);

// JobsJson: report.json's "jobs": the report's distributed jobs
// (job_ranks.h), also the body of a merged job's job.json (job_merge.h).
nlohmann::ordered_json JobsJson(const RunReport& report);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_JSON_H_
