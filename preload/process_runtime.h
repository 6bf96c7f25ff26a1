// Process runtime: start-up, fork children and the end of a process image.
// process_runtime.cc owns the flusher; other hooks reach it through here.
#ifndef RLSCOPE_PRELOAD_PROCESS_RUNTIME_H_
#define RLSCOPE_PRELOAD_PROCESS_RUNTIME_H_

namespace rlscope::preload {

// FinishImage: the process image is about to end without running the
// preload's destructor (_exit, exec): send everything recorded plus a
// Goodbye, then stop recording. A no-op in a vfork() child (it shares the
// parent's memory, flusher included) and when not recording.
void FinishImage(const char* reason);

// ResumeAfterFailedExec: exec returned (it failed): the image lives on, so
// recording restarts on a new stream (merged with the old one by pid).
void ResumeAfterFailedExec();

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PROCESS_RUNTIME_H_
