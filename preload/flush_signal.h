// FlushSignal: how producers wake the flusher early. The flusher sleeps on
// a futex word between flushes; a thread whose ring reaches half full (or
// Stop) sets the word and wakes it, so bursts are drained before they drop.
// Only the first requester of a round pays for the wake-up syscall.
#ifndef RLSCOPE_PRELOAD_FLUSH_SIGNAL_H_
#define RLSCOPE_PRELOAD_FLUSH_SIGNAL_H_

#include <atomic>
#include <cstdint>

namespace rlscope::preload {

class FlushSignal {
 public:
  // Request: wake the flusher (cheap when a wake-up is already pending).
  static inline void Request() {
    if (word_.load(std::memory_order_relaxed) == 0 && word_.exchange(1, std::memory_order_acq_rel) == 0) Wake();
  }
  // WaitFor: sleeps up to `timeout_ms` unless a request is pending, then
  // clears it. Flusher thread only.
  static void WaitFor(int timeout_ms);
  // Reset: a fork() child starts with no request pending (and its flusher
  // not yet asleep).
  static void Reset() {
    word_.store(0, std::memory_order_relaxed);
    sleeping_.store(false, std::memory_order_relaxed);
    awaited_.store(false, std::memory_order_relaxed);
    first_limit_ns_.store(0, std::memory_order_relaxed);
  }
  // RequestAndAwait: requests a flush and waits, polling, until one that
  // began after the request has finished (true), or the flusher sent
  // nothing for `stall_ms`, or `limit_ms` passed in all (false). A flush
  // that is sending may take longer than a stalled one is given: a burst
  // of calls on a loaded machine (or under ASan) takes over a second.
  // Async-signal-safe (atomics, futex wake, nanosleep): the fatal-signal
  // flush calls it from a crashing thread's handler.
  static bool RequestAndAwait(int stall_ms, int limit_ms);
  // NoteProgress: the flusher sent a frame (RequestAndAwait waits on).
  static void NoteProgress() { progress_.fetch_add(1, std::memory_order_release); }
  // Awaited: whether a RequestAndAwait was made (the process is crashing):
  // the flusher must then send, even where it would rather wait (a tick
  // rate not measured yet).
  static bool Awaited() { return awaited_.load(std::memory_order_acquire); }

 private:
  static void Wake();
  static std::atomic<uint32_t> word_;
  // Flusher state for RequestAndAwait: WaitFor calls begun (a flush has
  // finished at each), and whether the flusher is inside the wait.
  static std::atomic<uint64_t> waits_;
  static std::atomic<uint64_t> progress_;
  static std::atomic<int64_t> first_limit_ns_;  // RequestAndAwait's limit, set by the first (0: none yet).
  static std::atomic<bool> sleeping_;
  static std::atomic<bool> awaited_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_FLUSH_SIGNAL_H_
