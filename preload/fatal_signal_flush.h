// FatalSignalFlush: when the program dies of a crash signal (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGABRT), the flusher sends what its threads
// recorded up to the crash before the signal takes its course, so a crash
// loses nothing instead of the last flush interval (≤ 20 ms) of events.
//
// The program must not notice: the handler is installed only where the
// disposition is SIG_DFL at start-up; the handler puts SIG_DFL back
// before it returns, so the signal then does exactly what it would have
// (core dump included; a fault inside the handler ends the process at
// once; threads crashing together all wait for the one flush, and the
// process dies of the first to finish waiting);
// sigaction(), signal() and sigset() report SIG_DFL in its place (the
// wrappers in fatal_signal_flush.cc), so a runtime that installs its own
// handler only over SIG_DFL (Rust's stack overflow handler) still does,
// and chaining handlers chain to "default". A handler the program installs
// replaces ours; SIG_DFL set through sigaction() on a signal we serve puts
// ours back (still reading as SIG_DFL), so a handler that restores the
// "SIG_DFL" it replaced and raises again (Python's faulthandler) is
// flushed too; one that still finds ours (a raw rt_sigaction,
// bsd_signal) and calls it when chaining gets the crash as by SIG_DFL: the
// handler sets SIG_DFL before it returns. The handler waits for the
// flush while the flusher sends, until it has sent nothing for
// kFatalFlushStallMs or kFatalFlushLimitMs passed, and only uses
// async-signal-safe calls (the flusher thread does the work; it may itself
// be stuck, e.g. on a malloc lock the crashing thread held or a collector
// that stopped reading: then the wait ends after kFatalFlushStallMs).
// Limits: SIGKILL cannot be caught.
#ifndef RLSCOPE_PRELOAD_FATAL_SIGNAL_FLUSH_H_
#define RLSCOPE_PRELOAD_FATAL_SIGNAL_FLUSH_H_

namespace rlscope::preload {

// Longest a crashing thread waits for a flusher that sends nothing, and for
// one that sends, before dying. Why not a fixed 500 ms: two threads' burst
// of 200,000 calls took longer to send under ASan beside two CPU hogs, and
// half of it was lost; a flush that sends is worth waiting for, a stuck one
// is not.
constexpr int kFatalFlushStallMs = 500;
constexpr int kFatalFlushLimitMs = 5000;

// ResolveRealSignalFunctions: looks up glibc's signal() and sigset() behind
// our wrappers, so a first call from a signal handler needs no dlsym. From
// the preload's start-up, first, recording or not.
void ResolveRealSignalFunctions();

// InstallFatalSignalFlush: at start-up, once a flusher exists. `may_flush`
// says whether the flusher serves the calling process (not in a vfork()
// child); it must be async-signal-safe.
void InstallFatalSignalFlush(bool (*may_flush)());

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_FATAL_SIGNAL_FLUSH_H_
