// ResolveRealProcessFunctions: looks up the libc functions behind our
// process hooks (fork, posix_spawn[p]: child_process_hooks.cc; _exit,
// _Exit, execve, execvpe: image_end_hooks.cc) from the preload's
// start-up, recording or not. Their first call may come from a vfork()
// child or a signal handler, where dlsym (it locks and may allocate) must
// not run; a call before start-up still looks its function up then.
#ifndef RLSCOPE_PRELOAD_REAL_PROCESS_FUNCTIONS_H_
#define RLSCOPE_PRELOAD_REAL_PROCESS_FUNCTIONS_H_

#include <atomic>

#include "preload/real_symbol.h"

namespace rlscope::preload {

void ResolveRealSpawnFunctions();  // In child_process_hooks.cc.
void ResolveRealExecFunctions();   // In image_end_hooks.cc.

// RealFunction: `slot`, looked up as `name` when still empty.
template <typename Function>
Function RealFunction(std::atomic<Function>& slot, const char* name) {
  Function real = slot.load(std::memory_order_acquire);
  if (real == nullptr) {
    real = reinterpret_cast<Function>(ResolveNextSymbol(name, nullptr, nullptr));
    slot.store(real, std::memory_order_release);
  }
  return real;
}

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_REAL_PROCESS_FUNCTIONS_H_
