// Process runtime: start-up, fork children and the end of a process image.
// process_runtime.cc owns the flusher; other hooks reach it through here.
#ifndef RLSCOPE_PRELOAD_PROCESS_RUNTIME_H_
#define RLSCOPE_PRELOAD_PROCESS_RUNTIME_H_

#include <sys/types.h>

#include "format/wire_format.h"

namespace rlscope::preload {

// FinishImage: the process image is about to end without running the
// preload's destructor (_exit, exec): send everything recorded plus a
// Goodbye, then stop recording. A no-op in a vfork() child (it shares the
// parent's memory, flusher included) and when not recording.
void FinishImage(const char* reason);

// ResumeAfterFailedExec: exec returned (it failed): the image lives on, so
// recording restarts on a new stream (merged with the old one by pid).
void ResumeAfterFailedExec();

// NoteChildProcess: the calling thread started child `pid` (fork,
// posix_spawn) running `program` (nullptr: this image): recorded in this
// process's stream so the report names the child if its stream never comes.
void NoteChildProcess(pid_t pid, wire::ChildStart how, const char* program);

// NoteExecInVforkChild: called by the exec hooks before (`failed` false)
// and after a failed exec (`failed` true). In a vfork() child, which runs
// on its suspended parent's thread and memory, it records the child in the
// parent's stream; elsewhere it does nothing (an exec keeps the pid).
void NoteExecInVforkChild(const char* program, bool failed);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PROCESS_RUNTIME_H_
