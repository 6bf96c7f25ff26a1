// LoaderGate: keeps the preload's own calls into the dynamic loader out of
// fork(). dl_iterate_phdr holds the loader's write lock while it runs, and
// glibc (2.36) re-initialises only its main loader lock in a fork child: a
// fork while any preload thread (the flusher's module check, a stack
// sample, a hook's symbol search) was inside dl_iterate_phdr left the
// child's copy of that lock held by a thread the child does not have, and
// the child's next dl_iterate_phdr or dlopen waited forever.
//
// Every preload call that can take that lock goes through the gate. The
// preload's pthread_atfork prepare handler closes it and waits until no
// thread is inside; the parent and child handlers open it again. Entering
// is two atomic operations, no lock: safe on the hot path.
#ifndef RLSCOPE_PRELOAD_LOADER_GATE_H_
#define RLSCOPE_PRELOAD_LOADER_GATE_H_

#include <link.h>

#include <cstdint>

namespace rlscope::preload {

class LoaderGate {
 public:
  // TryEnter: false while a fork is being prepared (the caller skips the
  // work); true means the caller is inside and must Leave().
  static bool TryEnter();
  // Enter: waits (briefly: the length of a fork) while a fork is prepared.
  static void Enter();
  static void Leave();

  // InstallForkHandlers: registers CloseForFork and OpenAfterFork with
  // pthread_atfork. Call it before any other preload code registers fork
  // handlers: prepare handlers run in reverse order of registration, so
  // the gate closes after the preload's other fork handlers took their
  // locks (a thread holding one of those may need the gate to finish).
  static void InstallForkHandlers();
  // CloseForFork: the atfork prepare handler. Waits until no thread is
  // inside, at most kMaxForkWaitNs (a thread stuck inside the loader must
  // not hang the program's fork; the child may then hang, as it would
  // have without the gate). It sleeps while it waits, leaving the CPU to
  // the thread it waits for: on a busy machine (two CPUs, a fork tree of
  // 200 Python processes beside CPU hogs) a flusher preempted inside the
  // loader kept a spinning fork waiting past 2 s, and the child's copy
  // of the loader lock stayed held (its stream, and its children's, were
  // lost).
  static void CloseForFork();
  // OpenAfterFork: the parent's and the child's atfork handler.
  static void OpenAfterFork(bool child);

  static constexpr int64_t kMaxForkWaitNs = 10'000'000'000;
};

// LoaderScope: Enter/Leave for a scope.
class LoaderScope {
 public:
  LoaderScope() { LoaderGate::Enter(); }
  ~LoaderScope() { LoaderGate::Leave(); }
  LoaderScope(const LoaderScope&) = delete;
  LoaderScope& operator=(const LoaderScope&) = delete;
};

// IterateLoadedObjects: dl_iterate_phdr through the gate. The preload
// calls dl_iterate_phdr only through this.
int IterateLoadedObjects(int (*callback)(dl_phdr_info*, size_t, void*), void* data);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_LOADER_GATE_H_
