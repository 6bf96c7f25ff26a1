#include "preload/thread_buffer.h"

#include <sys/mman.h>

#include <new>

namespace rlscope::preload {

// recorder.h: never 0 (0 marks nothing open); the flusher sets its origin.
std::atomic<uint64_t> g_flush_epoch_ticks{1};

std::atomic<ThreadBuffer*> ThreadRegistry::head_{nullptr};

uint64_t ThreadRegistry::NextInstance() {
  static std::atomic<uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed) + 1;
}

ThreadBuffer* ThreadRegistry::Claim(uint32_t tid) {
  for (ThreadBuffer* b = Head(); b != nullptr; b = b->next_) {
    ThreadBuffer::State expected = ThreadBuffer::kFree;
    if (b->state_.load(std::memory_order_relaxed) == ThreadBuffer::kFree &&
        b->state_.compare_exchange_strong(expected, ThreadBuffer::kClaiming, std::memory_order_acq_rel)) {
      b->tid_.store(tid, std::memory_order_relaxed);
      b->instance_.store(NextInstance(), std::memory_order_relaxed);
      b->name_id_.store(0, std::memory_order_relaxed);
      b->lost_in_hole_ = 0;  // The last owner's hole is not the new owner's.
      b->ClearOpenSince();   // Nor are the calls it left open (it exited in one).
      b->state_.store(ThreadBuffer::kOwned, std::memory_order_release);  // Publishes tid and instance.
      return b;
    }
  }
  // mmap, not malloc: this runs inside hooks, possibly inside malloc itself.
  void* memory =
      mmap(nullptr, sizeof(ThreadBuffer), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  // Default-initialised, not value-initialised: `ThreadBuffer()` would
  // zero-fill the 1 MiB ring (fresh mmap memory is zero already) and touch
  // every page of it on the thread's first event.
  auto* buffer = new (memory) ThreadBuffer;
  buffer->tid_.store(tid, std::memory_order_relaxed);
  buffer->instance_.store(NextInstance(), std::memory_order_relaxed);
  buffer->state_.store(ThreadBuffer::kOwned, std::memory_order_relaxed);  // Published by the list push.
  ThreadBuffer* old_head = head_.load(std::memory_order_relaxed);
  do {
    buffer->next_ = old_head;
  } while (!head_.compare_exchange_weak(old_head, buffer, std::memory_order_release, std::memory_order_relaxed));
  return buffer;
}

void ThreadRegistry::Retire(ThreadBuffer* buffer) {
  buffer->state_.store(ThreadBuffer::kRetired, std::memory_order_release);
}

bool ThreadRegistry::ReleaseIfDrained(ThreadBuffer* buffer) {
  if (buffer->state() != ThreadBuffer::kRetired) return false;
  if (buffer->ReadIndex() != buffer->WriteIndex()) return false;
  // Drops counted after the flusher last took them (the thread filled its
  // ring while the flusher was draining it, then exited) must be sent too,
  // or they would be lost, or charged to the buffer's next owner.
  if (buffer->dropped_.load(std::memory_order_relaxed) != buffer->dropped_reported_) return false;
  // Hook work counted after the last batch took the counts belongs to the
  // retired thread: the next pass sends it, then the buffer is free.
  if (buffer->OverheadPending()) return false;
  buffer->state_.store(ThreadBuffer::kFree, std::memory_order_release);
  return true;
}

void ThreadRegistry::ResetAfterFork(ThreadBuffer* survivor, uint32_t child_tid) {
  for (ThreadBuffer* b = Head(); b != nullptr; b = b->next_) {
    b->Discard();               // The parent's pending records, drop counts and hook counts.
    b->name_sent_instance = 0;  // The child's flusher sends every name anew.
    b->name_sent_id = 0;
    b->idle_sample = {};  // The child's threads are read anew.
    b->cpu_wait_reading = {};
    // A buffer caught mid-claim by the fork belongs to a thread that is gone.
    if (b != survivor) b->state_.store(ThreadBuffer::kFree, std::memory_order_relaxed);
  }
  if (survivor != nullptr) {
    survivor->lost_in_hole_ = 0;  // The child's stream starts whole.
    survivor->tid_.store(child_tid, std::memory_order_relaxed);
    survivor->instance_.store(NextInstance(), std::memory_order_relaxed);
  }
}

size_t ThreadRegistry::MappedCount() {
  size_t count = 0;
  for (ThreadBuffer* b = Head(); b != nullptr; b = b->next_) ++count;
  return count;
}

}  // namespace rlscope::preload
