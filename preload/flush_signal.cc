#include "flush_signal.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace rlscope::preload {

std::atomic<uint32_t> FlushSignal::word_{0};

void FlushSignal::Wake() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void FlushSignal::WaitFor(int timeout_ms) {
  timespec timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1'000'000L};
  // Returns at once if a request is pending (the word is no longer 0).
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, 0, &timeout, nullptr, 0);
  word_.store(0, std::memory_order_release);
}

}  // namespace rlscope::preload
