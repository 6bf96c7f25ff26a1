// OperationInference: turns the operations a process's threads recorded by
// rule (preload/rules/default.rules: possibly nested, some only candidates)
// into the operations the report shows, deciding what only the whole run
// tells, after the fact:
//
//   1. A forward pass (the reserved operation "forward") is backprop when
//      it is part of a training step, else inference (acting). Part of a
//      training step: it contains a backprop operation (a user's
//      Agent.learn that calls backward), it runs inside one, or it runs
//      before the last backprop operation of its segment, the stretch
//      between two other operations (simulation, replay, ...): the target
//      network's and the critic's forward passes before loss.backward().
//   2. Simulator code (hooked simulator calls, native calls into simulator
//      libraries) is simulation wherever no rule opened an operation.
//   3. Time before a thread's first operation is startup (imports, set-up);
//      time after its last is teardown (saving, closing, interpreter exit).
//   4. Time between two operations (the loop's glue: converting
//      observations, computing the loss) belongs to the operation that
//      follows it, which it prepares, except right after backprop, where
//      it is the training step's tail (target-network updates, logging) and
//      stays backprop until the next operation; right after an env step
//      (its outputs converted), where it is simulation; and next to acting,
//      where it is acting (observations converted for the policy, its
//      output turned into an action). Where acting follows a training or
//      an env step, the acting statement is acting's from its first native
//      call (its argument converted for the policy). In an off-policy loop
//      written inline, the glue's last statements before a training step
//      that follows an env step sample its batch: replay. Explicit
//      operations, and the native calls of rlscope's own Python module
//      that open and close them, are not looked at: what is inferred does
//      not depend on whether parts of the program are annotated
//      (benchmarks compare the two on one run).
//   5. A thread whose env steps a rule found but that never acts through
//      a known policy (no inference: numpy by hand) acts in the glue
//      between its env steps; one that neither acts nor trains through
//      anything known (no inference, no backprop) trains in the glue
//      between an episode's last step and the next reset (the reserved
//      operation "env_reset", simulation otherwise). Not where that glue is
//      mostly waiting (an env worker process).
//   6. A process running a compiler helper (ptxas, nvlink, ...) is compile.
//
// Explicit operations (NVTX, rlscope.operation) are not touched and still
// win over inferred ones where both are open. Runs once per stream, right
// after decoding, so every view (corrected or not, every sink) sees the
// same operations.
#ifndef RLSCOPE_REPORT_OPERATION_INFERENCE_H_
#define RLSCOPE_REPORT_OPERATION_INFERENCE_H_

#include "report/process_timeline.h"

namespace rlscope::report {

// The reserved candidate names (rule_file.h), never shown in a report: a
// forward pass, and an env reset (simulation that starts an episode).
inline constexpr char kForwardCandidate[] = "forward";
inline constexpr char kResetCandidate[] = "env_reset";

// ResolveInferredOperations: rewrites each thread's inferred_operations as
// disjoint, resolved intervals, and adds their instances to
// operation_instances: each entry into an operation counts once, and so
// does each training step (its backprop pieces with only glue between).
void ResolveInferredOperations(ProcessTimeline& process, NameTable& names);

// IsCompilerHelper: a program that only compiles for another (ptxas: the
// one XLA and Triton start by the hundred), told by its executable's name.
bool IsCompilerHelper(const std::string& executable);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_OPERATION_INFERENCE_H_
