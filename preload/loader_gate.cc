#include "preload/loader_gate.h"

#include <pthread.h>
#include <time.h>

#include <atomic>

#include "preload/raw_log.h"

namespace rlscope::preload {

namespace {

// Threads inside the gate, and whether a fork is being prepared. Both
// sequentially consistent: a thread that entered after the fork closed the
// gate sees it closed, or the fork sees the thread (Dekker).
std::atomic<int> g_inside{0};
std::atomic<bool> g_closed{false};
// Nesting on this thread (a dlopen of ours inside a gated call, a signal
// handler): a thread already inside never waits, or a fork being prepared
// would wait for it while it waits for the fork.
__thread int t_depth __attribute__((tls_model("initial-exec")));

int64_t MonotonicNowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void PauseBriefly() {
  timespec pause{0, 50'000};
  nanosleep(&pause, nullptr);
}

}  // namespace

bool LoaderGate::TryEnter() {
  if (t_depth > 0) {
    ++t_depth;
    return true;
  }
  g_inside.fetch_add(1);
  if (g_closed.load()) {
    g_inside.fetch_sub(1);
    return false;
  }
  t_depth = 1;
  return true;
}

void LoaderGate::Enter() {
  while (!TryEnter()) PauseBriefly();
}

void LoaderGate::Leave() {
  if (--t_depth == 0) g_inside.fetch_sub(1);
}

void LoaderGate::CloseForFork() {
  g_closed.store(true);
  const int self = t_depth > 0 ? 1 : 0;  // fork() from a signal handler inside.
  if (g_inside.load() == self) return;
  const int64_t give_up_ns = MonotonicNowNs() + kMaxForkWaitNs;
  while (g_inside.load() != self) {
    if (MonotonicNowNs() > give_up_ns) {
      RawLog("fork(): a thread stayed inside the dynamic loader for %d s; the child may hang in dlopen",
             static_cast<int>(kMaxForkWaitNs / 1'000'000'000));
      return;
    }
    PauseBriefly();
  }
}

void LoaderGate::OpenAfterFork(bool child) {
  // In the child only the forking thread exists.
  if (child) g_inside.store(t_depth > 0 ? 1 : 0);
  g_closed.store(false);
}

void LoaderGate::InstallForkHandlers() {
  pthread_atfork(
      &LoaderGate::CloseForFork, [] { OpenAfterFork(false); }, [] { OpenAfterFork(true); });
}

int IterateLoadedObjects(int (*callback)(dl_phdr_info*, size_t, void*), void* data) {
  LoaderScope scope;
  return dl_iterate_phdr(callback, data);
}

}  // namespace rlscope::preload
