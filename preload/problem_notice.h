// ReportProblem: a problem with this process's capture that the user must
// hear of, said twice: one raw line on stderr now (RawLog, printed even
// under --quiet) and a notice with status "problem" that the report turns
// into one of the process's problem lines (the last one per topic), so a
// run whose stderr was not kept still says it. For start-up and one-time
// failure paths only: it formats and takes the notices' lock.
#ifndef RLSCOPE_PRELOAD_PROBLEM_NOTICE_H_
#define RLSCOPE_PRELOAD_PROBLEM_NOTICE_H_

namespace rlscope::preload {

// ReportProblem: `topic` (at most 15 characters) names the problem's kind;
// a later problem of the same topic replaces the earlier in the report.
void ReportProblem(const char* topic, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PROBLEM_NOTICE_H_
