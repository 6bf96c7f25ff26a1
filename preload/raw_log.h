// RawLog: the preload's only way to speak. Formats into a stack buffer and
// write(2)s one line to stderr: no allocation, no locks, no stdio (which the
// profiled program may be using or may have closed).
//
// Two kinds of line. RawLog: a problem the report may not be able to show
// (this process's trace is lost or cut, profiling or a level is off, a bad
// RLSCOPE_SIM entry): always printed. RawNotice: something the report says
// too (GPU capture missing or degraded, events dropped): left out under
// `rlscope run --quiet`, which sets RLSCOPE_QUIET=1.
#ifndef RLSCOPE_PRELOAD_RAW_LOG_H_
#define RLSCOPE_PRELOAD_RAW_LOG_H_

namespace rlscope::preload {

// InitRawLog: reads RLSCOPE_QUIET, once, first thing in the preload's
// start-up (never on a hook's path). Lines before it are printed.
void InitRawLog();

// RawLog writes "rlscope[pid]: <message>\n" to stderr.
void RawLog(const char* format, ...) __attribute__((format(printf, 1, 2)));

// RawNotice: RawLog's line, unless RLSCOPE_QUIET=1 was set at start-up.
void RawNotice(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_RAW_LOG_H_
