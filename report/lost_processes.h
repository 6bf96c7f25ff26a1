// Lost processes: children a traced process started (its stream recorded
// each fork, posix_spawn and exec from a vfork child) whose own stream never
// arrived, so they are absent from the report. Each becomes one problem
// line, so no process of the run disappears without a note.
#ifndef RLSCOPE_REPORT_LOST_PROCESSES_H_
#define RLSCOPE_REPORT_LOST_PROCESSES_H_

#include <string>
#include <vector>

#include "report/process_timeline.h"

namespace rlscope::report {

// LostChildProblems: one line per child recorded by one of `processes`
// (exec chains already merged) that has no stream of its own among them.
// A child whose last recorded start is a failed exec is not expected.
// Many lost children started the same way (one parent, one program) share
// one line naming the first few.
std::vector<std::string> LostChildProblems(const std::vector<ProcessTimeline>& processes);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_LOST_PROCESSES_H_
