#include "preload/flush_signal.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include "preload/tick_clock.h"

namespace rlscope::preload {

std::atomic<uint32_t> FlushSignal::word_{0};
std::atomic<uint64_t> FlushSignal::waits_{0};
std::atomic<uint64_t> FlushSignal::progress_{0};
std::atomic<int64_t> FlushSignal::first_limit_ns_{0};
std::atomic<bool> FlushSignal::sleeping_{false};
std::atomic<bool> FlushSignal::awaited_{false};

namespace {
// Set on the flusher thread: it must not wait for itself (an abort() in
// the flusher reaches the crash handler on that thread).
__thread bool t_is_flusher __attribute__((tls_model("initial-exec"))) = false;
}  // namespace

void FlushSignal::Wake() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void FlushSignal::WaitFor(int timeout_ms) {
  t_is_flusher = true;
  waits_.fetch_add(1, std::memory_order_acq_rel);  // The previous flush is done.
  sleeping_.store(true, std::memory_order_release);
  timespec timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1'000'000L};
  // Returns at once if a request is pending (the word is no longer 0).
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, 0, &timeout, nullptr, 0);
  sleeping_.store(false, std::memory_order_release);
  word_.store(0, std::memory_order_release);
}

bool FlushSignal::RequestAndAwait(int stall_ms, int limit_ms) {
  if (t_is_flusher) return false;
  // Asleep now: the next flush starts after this point and is done at the
  // next WaitFor. Awake: a flush may be under way that already passed the
  // caller's ring; the one after it is done a WaitFor later.
  awaited_.store(true, std::memory_order_release);
  const bool asleep = sleeping_.load(std::memory_order_acquire);
  const uint64_t target = waits_.load(std::memory_order_acquire) + (asleep ? 1 : 2);
  if (word_.exchange(1, std::memory_order_acq_rel) == 0) Wake();
  const int64_t start_ns = MonotonicNs();
  // One limit per process, from its first crash wait: a program's handler
  // that calls ours and then raises into it again waits once in all.
  const int64_t own_limit_ns = start_ns + limit_ms * 1'000'000LL;
  int64_t limit_ns = 0;  // The first wait's limit, where this one is not the first.
  if (first_limit_ns_.compare_exchange_strong(limit_ns, own_limit_ns, std::memory_order_acq_rel))
    limit_ns = own_limit_ns;
  uint64_t seen = progress_.load(std::memory_order_acquire) + waits_.load(std::memory_order_acquire);
  int64_t last_progress_ns = start_ns;
  for (;;) {
    const uint64_t waits = waits_.load(std::memory_order_acquire);
    if (waits >= target) return true;
    const int64_t now_ns = MonotonicNs();
    const uint64_t progress = progress_.load(std::memory_order_acquire) + waits;
    if (progress != seen) {
      seen = progress;
      last_progress_ns = now_ns;
    }
    if (now_ns >= limit_ns || now_ns - last_progress_ns >= stall_ms * 1'000'000LL) return false;
    timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace rlscope::preload
