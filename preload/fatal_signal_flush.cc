#include "preload/fatal_signal_flush.h"

#include <dlfcn.h>
#include <signal.h>

#include <atomic>
#include <cerrno>

#include "preload/flush_signal.h"

// glibc's own entry point behind sigaction(): calling it directly needs no
// dlsym (so the wrapper is async-signal-safe from its first call; programs
// call sigaction from signal handlers).
extern "C" int __sigaction(int signal_number, const struct sigaction* action, struct sigaction* old_action);

namespace rlscope::preload {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

bool (*g_may_flush)() = nullptr;
// The signals whose SIG_DFL was ours at start-up (bit N: signal N).
std::atomic<uint64_t> g_managed{0};

void OnFatalSignal(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  if (g_may_flush != nullptr && g_may_flush()) FlushSignal::RequestAndAwait(kFatalFlushStallMs, kFatalFlushLimitMs);
  errno = saved_errno;
  // SIG_DFL, so the crash takes its course when we return. (Also where a
  // program's handler that chains to the one it replaced calls us as a
  // function: glibc's signal() and a raw rt_sigaction show ours, not
  // SIG_DFL. Returning with a handler still installed would re-fault into
  // it for ever: a hang instead of the crash.)
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  __sigaction(signal_number, &default_action, nullptr);
  // A fault re-executes
  // its instruction on return and faults again; a signal that was sent
  // (kill, raise, abort: si_code <= 0), or one the kernel sends that is no
  // fault of an instruction (SIGBUS BUS_MCEERR_AO: memory found bad, not
  // touched), must be raised again. It stays pending until we return, so
  // the core shows the crash, not this frame.
  const bool refaults = info != nullptr && info->si_code > 0 && signal_number != SIGABRT &&
                        !(signal_number == SIGBUS && info->si_code == BUS_MCEERR_AO);
  if (!refaults) raise(signal_number);
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == &OnFatalSignal;
}

// glibc's signal() and sigset() call its sigaction internally, past the
// wrapper below: their own wrappers hide our handler in what they return.
using SignalFunction = sighandler_t (*)(int, sighandler_t);
std::atomic<SignalFunction> g_real_signal{nullptr};
std::atomic<SignalFunction> g_real_sigset{nullptr};

SignalFunction Real(std::atomic<SignalFunction>& slot, const char* name) {
  SignalFunction real = slot.load(std::memory_order_acquire);
  if (real == nullptr) {
    real = reinterpret_cast<SignalFunction>(dlsym(RTLD_NEXT, name));
    slot.store(real, std::memory_order_release);
  }
  return real;
}

// CallHidingOurs: glibc's signal()/sigset() (`slot`, `name`), with our
// handler reported as SIG_DFL in what it returns.
sighandler_t CallHidingOurs(std::atomic<SignalFunction>& slot, const char* name, int signal_number,
                            sighandler_t handler) {
  const SignalFunction real = Real(slot, name);
  if (real == nullptr) {
    errno = ENOSYS;
    return SIG_ERR;
  }
  const sighandler_t previous = real(signal_number, handler);
  return reinterpret_cast<void*>(previous) == reinterpret_cast<void*>(&OnFatalSignal) ? SIG_DFL : previous;
}

struct sigaction OurAction() {
  struct sigaction ours {};
  ours.sa_sigaction = &OnFatalSignal;
  // SA_ONSTACK: the program's alternate stack, if it set one, serves us
  // too (a stack overflow without one ends the process as by default).
  // No SA_RESETHAND: it would put SIG_DFL back at the first thread's
  // crash, and a second thread crashing during the flush would then end
  // the process before it; each crashing thread waits for the flush in
  // here instead, and the first to finish waiting sets SIG_DFL. The crash
  // signals are blocked in the handler, so a fault inside it ends the
  // process at once (the kernel forces SIG_DFL on a blocked fault).
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  for (int signal_number : kFatalSignals) sigaddset(&ours.sa_mask, signal_number);
  return ours;
}

// SetsDefault: whether `action` asks for SIG_DFL on a signal we serve.
// Handlers that chain to what they replaced put that "SIG_DFL" back and
// raise the signal again (Python's faulthandler, PyTorch's DataLoader
// workers): ours goes back instead, reading as SIG_DFL, so the crash is
// still flushed. Async-signal-safe (these calls come from handlers).
bool SetsDefault(int signal_number, const struct sigaction* action) {
  if (action == nullptr || (action->sa_flags & SA_SIGINFO) != 0 || action->sa_handler != SIG_DFL) return false;
  if (signal_number <= 0 || signal_number >= 64) return false;
  if ((g_managed.load(std::memory_order_acquire) & (uint64_t{1} << signal_number)) == 0) return false;
  return g_may_flush != nullptr && g_may_flush();
}

}  // namespace

void ResolveRealSignalFunctions() {
  Real(g_real_signal, "signal");
  Real(g_real_sigset, "sigset");
}

void InstallFatalSignalFlush(bool (*may_flush)()) {
  g_may_flush = may_flush;
  for (int signal_number : kFatalSignals) {
    struct sigaction current {};
    if (__sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;  // The program's own.
    const struct sigaction ours = OurAction();
    if (__sigaction(signal_number, &ours, nullptr) == 0) {
      g_managed.fetch_or(uint64_t{1} << signal_number, std::memory_order_acq_rel);
    }
  }
}

}  // namespace rlscope::preload

// sigaction wrapper: our crash handler reads as SIG_DFL, and SIG_DFL set
// on a signal we serve puts it back (see the header).
extern "C" __attribute__((visibility("default"))) int sigaction(int signal_number, const struct sigaction* action,
                                                                struct sigaction* old_action) {
  struct sigaction ours;
  if (rlscope::preload::SetsDefault(signal_number, action)) {
    ours = rlscope::preload::OurAction();
    action = &ours;
  }
  const int result = __sigaction(signal_number, action, old_action);
  if (result == 0 && old_action != nullptr && rlscope::preload::IsOurs(*old_action)) {
    *old_action = {};
    old_action->sa_handler = SIG_DFL;
    sigemptyset(&old_action->sa_mask);
  }
  return result;
}

extern "C" __attribute__((visibility("default"))) sighandler_t signal(int signal_number, sighandler_t handler) {
  return rlscope::preload::CallHidingOurs(rlscope::preload::g_real_signal, "signal", signal_number, handler);
}

extern "C" __attribute__((visibility("default"))) sighandler_t sigset(int signal_number, sighandler_t handler) {
  return rlscope::preload::CallHidingOurs(rlscope::preload::g_real_sigset, "sigset", signal_number, handler);
}
