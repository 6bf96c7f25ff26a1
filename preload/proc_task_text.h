// ReadTaskText: the start of one of a thread's /proc files
// (/proc/self/task/TID/<file>), as the flusher's samplers read them
// (schedstat, stat): one open, pread and close, no allocation.
#ifndef RLSCOPE_PRELOAD_PROC_TASK_TEXT_H_
#define RLSCOPE_PRELOAD_PROC_TASK_TEXT_H_

#include <cstddef>
#include <cstdint>

namespace rlscope::preload {

// ReadTaskText: at most size - 1 bytes of the file into text,
// NUL-terminated; false when it cannot be read (the thread is gone, no
// /proc, an empty file).
bool ReadTaskText(uint32_t tid, const char* file, char* text, size_t size);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_PROC_TASK_TEXT_H_
