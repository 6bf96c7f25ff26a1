// UnmatchedFunctions: why a process's time is in no operation ("(none)"),
// told by the functions it was spent under, each with a rule line that
// would name it. A program whose phases match no rule (an unusual
// structure, names the rules do not know) still gets an answer it can act
// on: paste the lines into a file, choose the operations, rerun with
// `--rules FILE`.
//
// The source is the process's Python lines (ProcessReport::python_lines):
// native time inside "(none)", by the user's innermost function on the
// stack (else the calling function). Python time between native calls is
// tied to no line, so a function is ranked by the native time under it.
#ifndef RLSCOPE_REPORT_UNMATCHED_FUNCTIONS_H_
#define RLSCOPE_REPORT_UNMATCHED_FUNCTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rlscope::report {

struct ProcessReport;  // run_report.h, which keeps the result per process.

struct UnmatchedFunction {
  std::string function;  // co_qualname ("Trainer.collect", "<module>").
  std::string file;      // As the report shows it (relative to the working directory when under it).
  int64_t ns = 0;        // Native time in "(none)" under it (LineRow::outer_ns: none counted twice).
  uint64_t calls = 0;
  bool user_code = false;
  // A rule line naming it, with OPERATION to replace; "" where no rule can
  // (top-level code: a rule would name the whole script).
  std::string rule;
};

struct UnmatchedTime {
  int64_t none_ns = 0;                       // The process's CPU-side time in "(none)".
  int64_t thread_ns = 0;                     // Its traced thread time (the share's base).
  std::vector<UnmatchedFunction> functions;  // Largest first, at most `limit`.
};

// ExplainUnmatched: `process`'s "(none)" time and the `limit` functions
// with the most native time in it. Its lines must be described already
// (function, file, whose code): the report does it once, after that, into
// ProcessReport::unmatched, which every sink reads.
UnmatchedTime ExplainUnmatched(const ProcessReport& process, size_t limit = 5);

// RuleFor: the rule line that names `function` of `file` (co_filename) as
// OPERATION, or "" for top-level code.
std::string RuleFor(const std::string& function, const std::string& file);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_UNMATCHED_FUNCTIONS_H_
