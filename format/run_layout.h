// RunLayout: the names of a run directory's files, the one place they are
// spelled (README.md's "Output" table describes each):
//
//   DIR/trace/<pid>.rlt       each traced process's event stream
//   DIR/meta.json             the command, its exit, wall time, capture levels
//   DIR/report.txt, .json, .html   the reports
//   DIR/rules/NN-name.rules   the rule files the run used, in order
//   DIR/calibration.json      the calibration that corrected the reports
//   DIR/nvidia-smi.csv, .err  nvidia-smi's samples during the run
//   DIR/.rlscope-report-room  disk room held for the reports (removed after)
//
// and of a merged job's directory (`rlscope merge --out JOB`):
//
//   JOB/job.json, JOB/job.txt   the nodes' runs as one job (report/job_merge.h)
//   JOB/nodes/N/report.json     a copy of the N-th node's report.json (N from 1)
#ifndef RLSCOPE_FORMAT_RUN_LAYOUT_H_
#define RLSCOPE_FORMAT_RUN_LAYOUT_H_

namespace rlscope::run_layout {

inline constexpr char kTraceDir[] = "trace";
inline constexpr char kTraceExtension[] = ".rlt";
inline constexpr char kMeta[] = "meta.json";
inline constexpr char kReportText[] = "report.txt";
inline constexpr char kReportJson[] = "report.json";
inline constexpr char kReportHtml[] = "report.html";
inline constexpr char kRulesDir[] = "rules";
inline constexpr char kCalibration[] = "calibration.json";
inline constexpr char kNvidiaSmiCsv[] = "nvidia-smi.csv";
inline constexpr char kNvidiaSmiStderr[] = "nvidia-smi.err";
inline constexpr char kReportRoom[] = ".rlscope-report-room";
inline constexpr char kJobJson[] = "job.json";
inline constexpr char kJobText[] = "job.txt";
inline constexpr char kJobNodesDir[] = "nodes";

}  // namespace rlscope::run_layout

#endif  // RLSCOPE_FORMAT_RUN_LAYOUT_H_
