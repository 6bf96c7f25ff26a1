// Threads that come and go while the flusher drains: the ThreadBuffer life
// cycle (claim, append, retire at thread exit, drain, free, reuse) under
// real concurrency. Built under -fsanitize=thread too (scripts/test.sh),
// where a missing acquire/release pair shows up as a data race.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "preload/thread_buffer.h"

using rlscope::preload::EventRecord;
using rlscope::preload::ThreadBuffer;
using rlscope::preload::ThreadRegistry;
using rlscope::wire::EventKind;

namespace {

struct Drained {
  uint64_t records = 0;
  uint64_t dropped = 0;
  uint64_t sum = 0;     // Of the records' begin_ticks: a lost or torn record changes it.
  uint64_t marked = 0;  // Drops the kRecordsLost markers tell of (not records made).
};

// FlusherPass: what the preload's flusher does with each buffer (records,
// drops, hook counts, then freeing a drained retired one). Returns whether
// anything was still pending.
bool FlusherPass(Drained& drained) {
  bool pending = false;
  for (ThreadBuffer* buffer = ThreadRegistry::Head(); buffer != nullptr; buffer = buffer->next()) {
    const ThreadBuffer::State state = buffer->state();
    if (state == ThreadBuffer::kFree || state == ThreadBuffer::kClaiming) continue;
    pending = true;
    const uint64_t read = buffer->ReadIndex(), write = buffer->WriteIndex();
    for (uint64_t i = read; i < write; ++i) {
      const EventRecord& record = buffer->At(i);
      if (record.kind == EventKind::kRecordsLost) {
        drained.marked += record.payload;
        continue;
      }
      drained.sum += record.begin_ticks;
      ++drained.records;
    }
    buffer->Consume(write - read);
    drained.dropped += buffer->TakeDropped();
    for (int k = 0; k < rlscope::wire::kOverheadKindCount; ++k) {
      buffer->TakeOverhead(static_cast<rlscope::wire::OverheadKind>(k));
    }
    if (state == ThreadBuffer::kRetired) ThreadRegistry::ReleaseIfDrained(buffer);
  }
  return pending;
}

}  // namespace

TEST_CASE("Threads exiting while the flusher drains lose no record and no drop", "[thread_buffer][concurrency]") {
  constexpr int kGenerations = 30;
  constexpr int kThreadsPerGeneration = 4;
  constexpr uint64_t kPerThread = 3 * ThreadBuffer::kCapacity / 2;  // Enough to overflow a ring now and then.
  std::atomic<bool> producers_done{false};
  std::atomic<int> unclaimed{0};
  Drained drained;
  std::thread flusher([&] {
    for (;;) {
      const bool done = producers_done.load(std::memory_order_acquire);
      if (!FlusherPass(drained) && done) break;
    }
  });
  uint64_t produced = 0, produced_sum = 0;
  for (int generation = 0; generation < kGenerations; ++generation) {
    std::vector<std::thread> producers;
    for (int t = 0; t < kThreadsPerGeneration; ++t) {
      producers.emplace_back([&unclaimed, generation, t] {
        // (Catch2's assertions are not thread-safe: failures are counted.)
        ThreadBuffer* buffer = ThreadRegistry::Claim(static_cast<uint32_t>(1000 + generation * 10 + t));
        if (buffer == nullptr) return void(unclaimed.fetch_add(1));
        for (uint64_t i = 0; i < kPerThread; ++i) {
          buffer->Append(EventRecord{i, i, static_cast<uint32_t>(t), EventKind::kCudaApi, 0, 0});
        }
        ThreadRegistry::Retire(buffer);  // The thread exits, perhaps mid-drain.
      });
      produced += kPerThread;
      produced_sum += kPerThread * (kPerThread - 1) / 2;
    }
    for (std::thread& producer : producers) producer.join();
  }
  producers_done.store(true, std::memory_order_release);
  flusher.join();
  CHECK(drained.records + drained.dropped == produced);
  // Every hole a record followed is marked; one at a thread's end is not.
  CHECK(drained.marked <= drained.dropped);
  if (drained.dropped == 0) CHECK(drained.sum == produced_sum);
  CHECK(unclaimed.load() == 0);
  // Drained buffers were reused: memory follows live threads, not churn.
  CHECK(ThreadRegistry::MappedCount() < kGenerations * kThreadsPerGeneration);
}
