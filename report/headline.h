// Headline: the answer a report leads with, from its own numbers: where the
// training loop's time goes (the operation and the level that dominate),
// how busy the GPU was, the most expensive line of the user's code, one or
// two next steps the numbers call for, and the overhead correction in one
// line. Every renderer shows it first (report.txt and the terminal,
// report.html, report.json's "headline"); the details follow.
//
// "The loop" is every operation but start-up and teardown: what a longer
// run would repeat. Shares are of CPU thread time (work, no Wait), as the
// breakdown's, over all processes. Next steps are suggestions tied to a
// threshold on those shares (headline.cc lists them); none is given when no
// threshold is crossed.
#ifndef RLSCOPE_REPORT_HEADLINE_H_
#define RLSCOPE_REPORT_HEADLINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace rlscope::report {

struct Headline {
  std::vector<std::string> findings;    // Sentences, most important first.
  std::vector<std::string> next_steps;  // At most two.
  std::string correction;               // One line: corrected (estimate, quality) or why not.
};

Headline MakeHeadline(const RunReport& report);

// OutsideTheLoop: start-up, teardown and launcher processes
// (launcher_processes.h), the operations not in the loop.
bool OutsideTheLoop(const std::string& operation);
// LoopThreadNs: the loop's CPU thread time (work, no Wait), all processes.
int64_t LoopThreadNs(const RunReport& report);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_HEADLINE_H_
