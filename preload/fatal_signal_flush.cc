#include "fatal_signal_flush.h"

#include <signal.h>

#include <cerrno>

#include "flush_signal.h"

// glibc's own entry point behind sigaction(): calling it directly needs no
// dlsym (so the wrapper is async-signal-safe from its first call; programs
// call sigaction from signal handlers).
extern "C" int __sigaction(int signal_number, const struct sigaction* action, struct sigaction* old_action);

namespace rlscope::preload {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

bool (*g_may_flush)() = nullptr;

void OnFatalSignal(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  if (g_may_flush != nullptr && g_may_flush()) FlushSignal::RequestAndAwait(kFatalFlushWaitMs);
  errno = saved_errno;
  // The disposition is SIG_DFL again (SA_RESETHAND). A fault re-executes
  // its instruction on return and faults again; a signal that was sent
  // (kill, raise, abort: si_code <= 0) must be raised again. It stays
  // pending until we return, so the core shows the crash, not this frame.
  if (info == nullptr || info->si_code <= 0) raise(signal_number);
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == &OnFatalSignal;
}

}  // namespace

void InstallFatalSignalFlush(bool (*may_flush)()) {
  g_may_flush = may_flush;
  for (int signal_number : kFatalSignals) {
    struct sigaction current {};
    if (__sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;  // The program's own.
    struct sigaction ours {};
    ours.sa_sigaction = &OnFatalSignal;
    // SA_ONSTACK: the program's alternate stack, if it set one, serves us
    // too (a stack overflow without one ends the process as by default).
    ours.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    __sigaction(signal_number, &ours, nullptr);
  }
}

}  // namespace rlscope::preload

// sigaction wrapper: our crash handler reads as SIG_DFL (see the header).
extern "C" __attribute__((visibility("default"))) int sigaction(int signal_number, const struct sigaction* action,
                                                                struct sigaction* old_action) {
  const int result = __sigaction(signal_number, action, old_action);
  if (result == 0 && old_action != nullptr && rlscope::preload::IsOurs(*old_action)) {
    *old_action = {};
    old_action->sa_handler = SIG_DFL;
    sigemptyset(&old_action->sa_mask);
  }
  return result;
}
