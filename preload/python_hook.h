// Python hook (python_hook.cc): Python -> native transitions, callbacks and
// inferred operations from a C-level CPython profile function.
#ifndef RLSCOPE_PRELOAD_PYTHON_HOOK_H_
#define RLSCOPE_PRELOAD_PYTHON_HOOK_H_

#include <cstdint>

namespace rlscope::preload {

// AttachPythonAllThreads: installs the hook on every existing Python thread
// (3.12: PyEval_SetProfileAllThreads; 3.11: each thread state). Call with
// the GIL held. Returns 1 when attached, 0 when not (not recording, or the
// interpreter lacks the API). `thread_name`: Python's name for the calling
// thread (shown in reports), or null.
int AttachPythonAllThreads(const char* thread_name);

// AttachPythonCurrentThread: the same for the calling thread only (threads
// started after attach, through the threading.setprofile bootstrap).
int AttachPythonCurrentThread(const char* thread_name);

// ThreadRunsPython: the calling thread runs Python under the hook (its
// operations come from the Python stack, not from native stacks).
bool ThreadRunsPython();

// PythonStackResets: how many times, in all threads, the hook's stack of
// open calls or watched frames was full of stale entries and reset (its
// open calls then go unrecorded; recording goes on). Zero again in a fork
// child.
uint64_t PythonStackResets();

// PythonEntriesGivenUp: the open calls and watched frames the hook gave up
// without a reset: those above a match when it followed a stack switch
// (greenlets) or a missed return, and those nested past a full stack whose
// returns it did not see. Zero again in a fork child.
uint64_t PythonEntriesGivenUp();

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PYTHON_HOOK_H_
