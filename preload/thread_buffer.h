// ThreadBuffer: one thread's event ring, written by that thread alone and
// drained by the flusher alone (single producer, single consumer, no locks).
//
// Life cycle (state_):
//   kFree --a new thread claims--> kClaiming --tid, instance set--> kOwned
//   kOwned --thread exits--> kRetired --flusher drains the rest--> kFree
// The flusher skips kFree and kClaiming buffers, so it never sees a
// half-claimed buffer with the previous owner's tid.
// Buffers are never unmapped, so the flusher can always read them; reuse
// bounds memory by the peak number of live traced threads, not by churn.
#ifndef RLSCOPE_PRELOAD_THREAD_BUFFER_H_
#define RLSCOPE_PRELOAD_THREAD_BUFFER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/event_record.h"
#include "preload/flush_signal.h"
#include "preload/thread_cpu_wait.h"
#include "preload/thread_idle.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

// The flush epoch: the ticks at which the flusher's latest flush began
// (never 0). A hook opening a call it will record at its end stores it in
// the thread's buffer before reading the call's begin (recorder.h
// NoteCallOpen), so the call begins after the epoch it stored; the flusher
// then tells the reader up to when each thread's stream is settled
// (flusher.cc).
extern std::atomic<uint64_t> g_flush_epoch_ticks;

class ThreadBuffer {
 public:
  enum State : uint32_t { kFree = 0, kOwned = 1, kRetired = 2, kClaiming = 3 };

  // 32768 records x 32 bytes = 1 MiB per thread (mapped lazily: a quiet
  // thread touches little of it). The flusher is woken at half full, so a
  // Python thread emitting 10 M events/s (the profile hook's peak) has
  // about 1.6 ms of slack before anything is dropped.
  static constexpr uint32_t kCapacity = 32768;
  static_assert((kCapacity & (kCapacity - 1)) == 0, "capacity must be a power of two");

  // Append: producer side. Never blocks: a full ring drops and counts.
  // The first record kept after a drop is preceded by a kRecordsLost
  // marker (both fit, or neither is kept), so the reader knows where the
  // stream has its hole.
  inline void Append(const EventRecord& record) {
    uint64_t write = write_index_.load(std::memory_order_relaxed);
    uint64_t used = write - read_index_.load(std::memory_order_acquire);
    if (used + (lost_in_hole_ != 0 ? 2 : 1) > kCapacity) {
      dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++lost_in_hole_;
      return;
    }
    if (__builtin_expect(lost_in_hole_ != 0, 0)) {
      // Timed now, not at the record's begin: a stack-frame record carries
      // addresses there.
      const uint64_t now = NowTicks();
      records_[write & (kCapacity - 1)] = EventRecord{now, now, 0, wire::EventKind::kRecordsLost, 0, lost_in_hole_};
      ++write;
      ++used;
      lost_in_hole_ = 0;
    }
    records_[write & (kCapacity - 1)] = record;
    write_index_.store(write + 1, std::memory_order_release);
    // Half full: wake the flusher now rather than at its next tick (a
    // syscall: timed, so the correction can remove it).
    if (__builtin_expect(used + 1 == kCapacity / 2, 0)) {
      const uint64_t begin = NowTicks();
      FlushSignal::Request();
      CountOverhead(wire::OverheadKind::kFlusherWake, NowTicks() - begin);
    }
  }

  // CountOverhead: producer side, hook work that leaves no event of its
  // own (wire::OverheadKind); `ticks` for the kinds that time themselves.
  inline void CountOverhead(wire::OverheadKind kind, uint64_t ticks = 0) {
    const auto k = static_cast<size_t>(kind);
    overhead_count_[k].store(overhead_count_[k].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (ticks != 0) {
      overhead_ticks_[k].store(overhead_ticks_[k].load(std::memory_order_relaxed) + ticks, std::memory_order_relaxed);
    }
  }
  // TakeOverhead: consumer side, the count and ticks of `kind` since the
  // last call.
  struct OverheadDelta {
    uint64_t count;
    uint64_t ticks;
  };
  OverheadDelta TakeOverhead(wire::OverheadKind kind) {
    const auto k = static_cast<size_t>(kind);
    const uint64_t count = overhead_count_[k].load(std::memory_order_relaxed);
    const uint64_t ticks = overhead_ticks_[k].load(std::memory_order_relaxed);
    const OverheadDelta delta{count - overhead_count_sent_[k], ticks - overhead_ticks_sent_[k]};
    overhead_count_sent_[k] = count;
    overhead_ticks_sent_[k] = ticks;
    return delta;
  }

  // OverheadPending: consumer side, whether counts were made since the
  // last TakeOverhead of their kind.
  bool OverheadPending() const {
    for (int k = 0; k < wire::kOverheadKindCount; ++k) {
      if (overhead_count_[k].load(std::memory_order_relaxed) != overhead_count_sent_[k] ||
          overhead_ticks_[k].load(std::memory_order_relaxed) != overhead_ticks_sent_[k]) {
        return true;
      }
    }
    return false;
  }
  // ForgetOverhead: consumer side, drops the counts not taken yet.
  void ForgetOverhead() {
    for (int k = 0; k < wire::kOverheadKindCount; ++k) TakeOverhead(static_cast<wire::OverheadKind>(k));
  }

  // Consumer side: records [read, write) are readable until Consume(n).
  uint64_t ReadIndex() const { return read_index_.load(std::memory_order_relaxed); }
  uint64_t WriteIndex() const { return write_index_.load(std::memory_order_acquire); }
  const EventRecord& At(uint64_t index) const { return records_[index & (kCapacity - 1)]; }
  void Consume(uint64_t count) {
    read_index_.store(read_index_.load(std::memory_order_relaxed) + count, std::memory_order_release);
  }
  // TakeDropped: drops since the last call (consumer side).
  uint64_t TakeDropped() {
    const uint64_t total = dropped_.load(std::memory_order_relaxed);
    const uint64_t fresh = total - dropped_reported_;
    dropped_reported_ = total;
    return fresh;
  }

  // Discard: consumer side, forgets all not sent yet (records, drop counts,
  // hook counts); returns the records and drops it forgot. A kRecordsLost
  // marker among the unsent records is the ring's, not the thread's: the
  // drops it tells of are in the drop count already, so it is not counted
  // (counting it would charge the thread one record it never made).
  uint64_t Discard() {
    const uint64_t read = ReadIndex();
    const uint64_t write = WriteIndex();
    uint64_t forgotten = 0;
    for (uint64_t i = read; i < write; ++i) forgotten += At(i).kind != wire::EventKind::kRecordsLost;
    Consume(write - read);
    forgotten += TakeDropped();
    ForgetOverhead();
    return forgotten;
  }

  // What the flusher may tell the reader is settled (wire Batch.settled_ns):
  // the calls recorded at their end that are still open on this thread,
  // one slot per family of hooks that opens them (their nestings are kept
  // apart: a CUDA call inside a Python native call ends first). A slot
  // holds the flush epoch (g_flush_epoch_ticks) loaded before the
  // family's outermost open call read its begin, or 0: nothing open.
  // Producer: SetOpenSince; consumer: OldestOpenSince, read before the
  // ring is drained (a slot cleared after its call's record was appended
  // tells the flusher that record is in the ring).
  enum OpenFamily : int {
    kOpenCudaRuntime = 0,
    kOpenTrampoline,
    kOpenPythonCall,
    kOpenPythonCallback,
    kOpenCupti,
    kOpenOther,
    kOpenInstant,
    kOpenFamilies
  };
  void SetOpenSince(OpenFamily family, uint64_t epoch) { open_since_[family].store(epoch, std::memory_order_release); }
  uint64_t OpenSince(OpenFamily family) const { return open_since_[family].load(std::memory_order_relaxed); }
  // OldestOpenSince: the earliest epoch of an open call, 0 when none.
  uint64_t OldestOpenSince() const {
    uint64_t oldest = 0;
    for (const std::atomic<uint64_t>& slot : open_since_) {
      const uint64_t epoch = slot.load(std::memory_order_acquire);
      if (epoch != 0 && (oldest == 0 || epoch < oldest)) oldest = epoch;
    }
    return oldest;
  }
  // ClearOpenSince: a new owner starts with nothing open.
  void ClearOpenSince() {
    for (std::atomic<uint64_t>& slot : open_since_) slot.store(0, std::memory_order_relaxed);
  }

  uint32_t tid() const { return tid_.load(std::memory_order_acquire); }
  State state() const { return state_.load(std::memory_order_acquire); }
  // Instance: process-unique serial of the owning thread, new with every
  // claim. Identifies the thread on the wire (tids get reused) and tells
  // the flusher a new owner, whose name it has not sent yet, from the old.
  uint64_t instance() const { return instance_.load(std::memory_order_acquire); }
  ThreadBuffer* next() const { return next_; }
  // The thread's name as an interned string id (0: none yet). Set by the
  // owning thread (its OS name at registration and exit, its Python name
  // when Python attaches); the flusher sends it when it changes.
  void SetName(uint32_t name_id) { name_id_.store(name_id, std::memory_order_release); }
  uint32_t name_id() const { return name_id_.load(std::memory_order_acquire); }
  // Flusher-owned: the (instance, name) last sent.
  uint64_t name_sent_instance = 0;
  uint32_t name_sent_id = 0;
  // Flusher-owned: the thread's last reading for blocked spans.
  IdleSample idle_sample;
  // Flusher-owned: the thread's last reading of its run and wait times.
  CpuWaitReading cpu_wait_reading;

 private:
  friend class ThreadRegistry;

  std::atomic<uint64_t> write_index_{0};
  // Producer-written, consumer-read (SetOpenSince): on the line the
  // producer writes at every record anyway.
  std::atomic<uint64_t> open_since_[kOpenFamilies] = {};
  alignas(64) std::atomic<uint64_t> read_index_{0};
  std::atomic<uint64_t> dropped_{0};
  // Producer-owned: records dropped since the last one kept (Append).
  uint64_t lost_in_hole_ = 0;
  uint64_t dropped_reported_ = 0;  // Consumer-owned.
  std::atomic<uint32_t> tid_{0};
  std::atomic<uint64_t> instance_{0};
  std::atomic<uint32_t> name_id_{0};
  std::atomic<State> state_{kFree};
  ThreadBuffer* next_ = nullptr;  // Immutable once published in the registry.
  // Producer-written totals (CountOverhead); the consumer's last-sent copy.
  alignas(64) std::atomic<uint64_t> overhead_count_[wire::kOverheadKindCount] = {};
  std::atomic<uint64_t> overhead_ticks_[wire::kOverheadKindCount] = {};
  uint64_t overhead_count_sent_[wire::kOverheadKindCount] = {};
  uint64_t overhead_ticks_sent_[wire::kOverheadKindCount] = {};
  alignas(64) EventRecord records_[kCapacity];
};

// ThreadRegistry: every ThreadBuffer ever mapped, as a lock-free push-only
// list. Claim reuses a free buffer before mapping a new one.
class ThreadRegistry {
 public:
  // Claim: a buffer owned by the calling thread `tid`, or nullptr when no
  // memory could be mapped (the caller then records nothing).
  static ThreadBuffer* Claim(uint32_t tid);
  // Retire: the owning thread is gone; the flusher frees it once drained.
  static void Retire(ThreadBuffer* buffer);
  // ReleaseIfDrained: flusher side, turns a drained retired buffer free.
  static bool ReleaseIfDrained(ThreadBuffer* buffer);
  static ThreadBuffer* Head() { return head_.load(std::memory_order_acquire); }
  // ResetAfterFork: in a fork() child, every buffer except the forking
  // thread's belongs to a thread that no longer exists; all pending records
  // belong to the parent, which sends them itself. The survivor (may be
  // null) now belongs to the child's only thread, `child_tid`, as a new
  // thread instance.
  static void ResetAfterFork(ThreadBuffer* survivor, uint32_t child_tid);
  // Count of buffers ever mapped (for the memory bound in the README).
  static size_t MappedCount();

 private:
  static uint64_t NextInstance();
  static std::atomic<ThreadBuffer*> head_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_THREAD_BUFFER_H_
