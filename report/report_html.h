// report.html: the report as one self-contained page (inline CSS, SVG and
// a little script; nothing fetched), written next to report.json and
// report.txt. It shows what report.txt explains, drawn: RL-Scope's main
// figure (time per operation, split by resource CPU / CPU+GPU / GPU,
// stacked by category), GPU busy time next to nvidia-smi's claim,
// transitions per iteration, per-process and per-thread views, the top
// Python lines, and the run's metadata, calibration and problems.
//
// A corrected report carries both views; a switch (or the URL's hash,
// report.html#uncorrected / #corrected) shows one. Tables are capped for
// big runs (the largest first, with a note); report.json has everything.
#ifndef RLSCOPE_REPORT_REPORT_HTML_H_
#define RLSCOPE_REPORT_REPORT_HTML_H_

#include <string>

#include "report/run_report.h"

namespace rlscope::report {

std::string FormatReportHtml(const RunReport& report);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_HTML_H_
