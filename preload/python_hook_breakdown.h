// PythonHookBreakdown: where the Python hook's sampled callbacks spend
// their time, a measuring aid for the question the in-band sample leaves
// open: the hook takes 22-24 ns a callback in the calibration's loops and
// about 230 ns in a real GPU training script, and which callbacks, and
// which of their steps, make up the difference.
//
// Parts: every sampled callback (PythonHookSample, one in 256) adds its
// time to its part (the kind of event, and for a call what the callable
// was), when the breakdown was asked for. Free for the callbacks that are
// not sampled.
// Steps: with the build option RLSCOPE_HOOK_STEPS, the recorded native
// call's path marks its steps too (the callable read, the recorded check,
// the caller's code and line, the wrapped function, the store), each mark
// a thread-local test in every callback: not in a normal build.
// RLSCOPE_HOOK_BREAKDOWN=1 prints both at the process's exit (stderr).
#ifndef RLSCOPE_PRELOAD_PYTHON_HOOK_BREAKDOWN_H_
#define RLSCOPE_PRELOAD_PYTHON_HOOK_BREAKDOWN_H_

#include <cstdint>

#include "preload/tick_clock.h"

#ifndef RLSCOPE_HOOK_STEPS
#define RLSCOPE_HOOK_STEPS 0
#endif

namespace rlscope::preload {

enum class HookPart : uint8_t {
  kOther,         // Unwind, throw, the no-op hook's callbacks.
  kStart,         // A Python function's start (PY_START, PY_RESUME; the profile function's call).
  kReturn,        // Its return.
  kCallPython,    // A call site whose callable is a Python function.
  kCallBuiltin,   // A native callable that is Python time (not recorded).
  kCallRecorded,  // A native callable that is recorded (a transition, a wait).
  kNativeReturn,  // A native call's return (C_RETURN, C_RAISE).
  kCodeSetup,     // Any callback that met a code object first (its info set up: once per code object).
  kCount,
};

enum class HookStep : uint8_t {
  kCallable,  // From the callback's entry: the thread, the frame, the callable's function.
  kRecorded,  // Whether it is recorded (builtin or not, blocking or not).
  kWhere,     // The caller's code and line.
  kOpens,     // The wrapped function and the operation the call opens.
  kStore,     // The open call stored (and an operation's push recorded).
  kCount,
};

// Whether RLSCOPE_HOOK_BREAKDOWN=1 (read by InitPythonHookBreakdown at
// the preload's start): the tallies are kept only then.
extern bool g_hook_breakdown;
void InitPythonHookBreakdown();
// ResetPythonHookBreakdown: a fork child starts with no samples (else its
// exit would print the parent's again).
void ResetPythonHookBreakdown();

// NoteHookPart: a sampled callback of `part` took `ticks`.
void NoteHookPart(HookPart part, uint64_t ticks);

#if RLSCOPE_HOOK_STEPS
// The time of the last mark in this thread's sampled callback (0: none).
extern __thread uint64_t t_hook_mark_ticks __attribute__((tls_model("initial-exec")));
void NoteHookStep(HookStep step, uint64_t ticks);
inline void HookMark(HookStep step) {
  if (__builtin_expect(t_hook_mark_ticks != 0, 0) && g_hook_breakdown) {
    const uint64_t now = NowTicks();
    NoteHookStep(step, now - t_hook_mark_ticks);
    t_hook_mark_ticks = now;
  }
}
inline void HookMarkBegin(uint64_t ticks) { t_hook_mark_ticks = ticks; }
#else
inline void HookMark(HookStep) {}
inline void HookMarkBegin(uint64_t) {}
#endif

// LogPythonHookBreakdown: at exit, with RLSCOPE_HOOK_BREAKDOWN=1, a line
// per part and step that was sampled: samples, mean ns, share of the
// sampled time.
void LogPythonHookBreakdown(double ns_per_tick);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PYTHON_HOOK_BREAKDOWN_H_
