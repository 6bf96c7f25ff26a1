// LauncherProcesses: a process that runs no operation itself but starts
// processes that do - torchrun's agent, mpirun and its daemons, a shell
// script, a Python parent that only spawns workers and waits - is a
// launcher: its whole life is the operation "launcher", which, like
// start-up and teardown, is outside the training loop (headline.h). Left
// "(none)", its imports and its monitoring loop would read as the loop's
// unexplained time.
//
// Run-level, after every stream is decoded and its operations inferred
// (operation_inference.h), before capture windows are applied: whether a
// process launches is known only from the processes it started (by parent
// pid or fork origin, started within its life, their own children
// included: mpirun -> orted -> ranks).
#ifndef RLSCOPE_REPORT_LAUNCHER_PROCESSES_H_
#define RLSCOPE_REPORT_LAUNCHER_PROCESSES_H_

#include <vector>

#include "report/process_timeline.h"

namespace rlscope::report {

inline constexpr char kLauncherOperation[] = "launcher";

// MarkLaunchers: gives each launcher's threads the inferred operation
// kLauncherOperation over their lives (one instance each). Processes with
// an operation of their own, explicit or inferred, are left alone.
void MarkLaunchers(std::vector<ProcessTimeline>& processes, NameTable& names);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_LAUNCHER_PROCESSES_H_
