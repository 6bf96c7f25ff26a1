// RawLog: the preload's only way to speak. Formats into a stack buffer and
// write(2)s one line to stderr: no allocation, no locks, no stdio (which the
// profiled program may be using or may have closed).
#ifndef RLSCOPE_PRELOAD_RAW_LOG_H_
#define RLSCOPE_PRELOAD_RAW_LOG_H_

namespace rlscope::preload {

// RawLog writes "rlscope[pid]: <message>\n" to stderr.
void RawLog(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_RAW_LOG_H_
