#include "preload/thread_buffer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

using rlscope::preload::EventRecord;
using rlscope::preload::ThreadBuffer;
using rlscope::preload::ThreadRegistry;
using rlscope::wire::EventKind;

namespace {

EventRecord Numbered(uint64_t writer, uint64_t sequence) {
  return EventRecord{sequence, sequence, static_cast<uint32_t>(writer), EventKind::kCudaApi, 0, writer};
}

// TakeAllOverhead: what the flusher does with a buffer's hook counts.
uint64_t TakeAllOverhead(ThreadBuffer* buffer) {
  uint64_t count = 0;
  for (int k = 1; k < rlscope::wire::kOverheadKindCount; ++k) {
    count += buffer->TakeOverhead(static_cast<rlscope::wire::OverheadKind>(k)).count;
  }
  return count;
}

}  // namespace

TEST_CASE("ThreadBuffer drops and counts when full, never overwrites", "[thread_buffer]") {
  ThreadBuffer* buffer = ThreadRegistry::Claim(1);
  REQUIRE(buffer != nullptr);
  const uint64_t start = buffer->WriteIndex();
  for (uint64_t i = 0; i < ThreadBuffer::kCapacity + 10; ++i) buffer->Append(Numbered(1, i));
  CHECK(buffer->WriteIndex() - buffer->ReadIndex() == ThreadBuffer::kCapacity);
  CHECK(buffer->TakeDropped() == 10);
  CHECK(buffer->TakeDropped() == 0);  // Counted once.
  // The oldest records are intact.
  CHECK(buffer->At(start).begin_ticks == 0);
  CHECK(buffer->At(start + ThreadBuffer::kCapacity - 1).begin_ticks == ThreadBuffer::kCapacity - 1);
  buffer->Consume(buffer->WriteIndex() - buffer->ReadIndex());
  ThreadRegistry::Retire(buffer);
  // Half full woke the flusher once (timed): hook work the flusher must
  // send before the buffer can pass to another thread.
  CHECK_FALSE(ThreadRegistry::ReleaseIfDrained(buffer));
  CHECK(TakeAllOverhead(buffer) == 1);
  CHECK(ThreadRegistry::ReleaseIfDrained(buffer));
}

TEST_CASE("The first record kept after a drop follows a marker of the hole", "[thread_buffer]") {
  ThreadBuffer* buffer = ThreadRegistry::Claim(6);
  REQUIRE(buffer != nullptr);
  const uint64_t start = buffer->ReadIndex();
  for (uint64_t i = 0; i < ThreadBuffer::kCapacity + 3; ++i) buffer->Append(Numbered(6, i));
  CHECK(buffer->TakeDropped() == 3);
  // One slot free: the marker and the record need two, so neither is kept.
  buffer->Consume(1);
  buffer->Append(Numbered(6, 100));
  CHECK(buffer->WriteIndex() - start == ThreadBuffer::kCapacity);
  CHECK(buffer->TakeDropped() == 1);
  // Room again: the marker (with the drops so far), then the record.
  buffer->Consume(buffer->WriteIndex() - buffer->ReadIndex());
  buffer->Append(Numbered(6, 200));
  buffer->Append(Numbered(6, 201));
  REQUIRE(buffer->WriteIndex() - buffer->ReadIndex() == 3);
  const EventRecord& marker = buffer->At(buffer->ReadIndex());
  CHECK(marker.kind == EventKind::kRecordsLost);
  CHECK(marker.payload == 4);  // Lost in this hole.
  CHECK(buffer->At(buffer->ReadIndex() + 1).begin_ticks == 200);
  CHECK(buffer->At(buffer->ReadIndex() + 2).begin_ticks == 201);  // One marker per hole.
  buffer->Consume(3);
  ThreadRegistry::Retire(buffer);
  TakeAllOverhead(buffer);
  CHECK(ThreadRegistry::ReleaseIfDrained(buffer));
}

TEST_CASE("Hook counts are taken once, and a reused buffer starts with none", "[thread_buffer]") {
  ThreadBuffer* buffer = ThreadRegistry::Claim(3);
  REQUIRE(buffer != nullptr);
  TakeAllOverhead(buffer);
  buffer->CountOverhead(rlscope::wire::OverheadKind::kPythonCall);
  buffer->CountOverhead(rlscope::wire::OverheadKind::kPythonCall);
  buffer->CountOverhead(rlscope::wire::OverheadKind::kCodeSetup, 500);
  CHECK(buffer->TakeOverhead(rlscope::wire::OverheadKind::kPythonCall).count == 2);
  const ThreadBuffer::OverheadDelta setup = buffer->TakeOverhead(rlscope::wire::OverheadKind::kCodeSetup);
  CHECK(setup.count == 1);
  CHECK(setup.ticks == 500);
  CHECK(TakeAllOverhead(buffer) == 0);
  // Counted after the last take, then the thread exits: not released
  // until taken, so the next owner does not inherit them.
  buffer->CountOverhead(rlscope::wire::OverheadKind::kNestedHook);
  ThreadRegistry::Retire(buffer);
  CHECK_FALSE(ThreadRegistry::ReleaseIfDrained(buffer));
  CHECK(TakeAllOverhead(buffer) == 1);
  CHECK(ThreadRegistry::ReleaseIfDrained(buffer));
  ThreadBuffer* reused = ThreadRegistry::Claim(4);
  CHECK(TakeAllOverhead(reused) == 0);
  ThreadRegistry::Retire(reused);
  CHECK(ThreadRegistry::ReleaseIfDrained(reused));
}

TEST_CASE("Retired buffers are reused only once drained", "[thread_buffer]") {
  ThreadBuffer* buffer = ThreadRegistry::Claim(2);
  buffer->Append(Numbered(2, 0));
  ThreadRegistry::Retire(buffer);
  CHECK_FALSE(ThreadRegistry::ReleaseIfDrained(buffer));  // One record still unread.
  buffer->Consume(1);
  CHECK(ThreadRegistry::ReleaseIfDrained(buffer));
  const size_t mapped = ThreadRegistry::MappedCount();
  ThreadBuffer* reused = ThreadRegistry::Claim(3);
  CHECK(ThreadRegistry::MappedCount() == mapped);
  CHECK(reused->tid() == 3);
  ThreadRegistry::Retire(reused);
  ThreadRegistry::ReleaseIfDrained(reused);
}

TEST_CASE("Drops counted while the flusher drained, then the thread exited, are not lost", "[thread_buffer]") {
  ThreadBuffer* buffer = ThreadRegistry::Claim(5);
  for (uint64_t i = 0; i < ThreadBuffer::kCapacity; ++i) buffer->Append(Numbered(5, i));
  TakeAllOverhead(buffer);
  CHECK(buffer->TakeDropped() == 0);  // The flusher's pass begins: nothing dropped yet.
  buffer->Append(Numbered(5, 0));     // The ring is still full: dropped.
  ThreadRegistry::Retire(buffer);     // ... and the thread exits.
  buffer->Consume(ThreadBuffer::kCapacity);
  CHECK_FALSE(ThreadRegistry::ReleaseIfDrained(buffer));  // The drop is not sent yet.
  CHECK(buffer->TakeDropped() == 1);
  CHECK(ThreadRegistry::ReleaseIfDrained(buffer));
}

TEST_CASE("Discard counts what the thread made, not the marker of a hole", "[thread_buffer]") {
  // The flood e2e case with the collector stalled across the exit: the
  // flusher drains a full ring (its drops taken), the thread keeps a record
  // after the hole (marker + record), ends, and its ring is reclaimed while
  // a send waits. Every record made is sent or counted dropped exactly once.
  ThreadBuffer* buffer = ThreadRegistry::Claim(11);
  REQUIRE(buffer != nullptr);
  uint64_t made = 0, sent = 0, dropped = 0;
  for (uint64_t i = 0; i < ThreadBuffer::kCapacity + 3; ++i, ++made) buffer->Append(Numbered(11, i));
  dropped += buffer->TakeDropped();  // The flusher's pass: 3 drops, the full ring sent.
  sent += buffer->WriteIndex() - buffer->ReadIndex();
  buffer->Consume(buffer->WriteIndex() - buffer->ReadIndex());
  buffer->Append(Numbered(11, 200));  // Marker of the hole, then the record.
  buffer->Append(Numbered(11, 201));  // The thread's ThreadEnd, say.
  made += 2;
  REQUIRE(buffer->At(buffer->ReadIndex()).kind == EventKind::kRecordsLost);
  ThreadRegistry::Retire(buffer);
  dropped += buffer->Discard();  // Reclaimed while a send waits.
  CHECK(sent == ThreadBuffer::kCapacity);
  CHECK(sent + dropped == made);
  CHECK(ThreadRegistry::ReleaseIfDrained(buffer));
}

TEST_CASE("Concurrent writers and one draining reader lose nothing", "[thread_buffer][concurrency]") {
  constexpr int kWriters = 8;
  constexpr uint64_t kPerWriter = 200000;
  std::vector<ThreadBuffer*> buffers(kWriters, nullptr);
  std::atomic<int> ready{0};
  std::atomic<bool> writers_done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      buffers[w] = ThreadRegistry::Claim(100 + w);
      ready.fetch_add(1);
      // Keep offering until accepted: the reader frees space as it drains.
      for (uint64_t i = 0; i < kPerWriter;) {
        if (buffers[w]->WriteIndex() - buffers[w]->ReadIndex() < ThreadBuffer::kCapacity) {
          buffers[w]->Append(Numbered(w, i));
          ++i;
        }
      }
      ThreadRegistry::Retire(buffers[w]);
    });
  }
  while (ready.load() < kWriters) std::this_thread::yield();
  std::vector<uint64_t> next_expected(kWriters, 0);
  uint64_t out_of_order = 0;
  std::thread reader([&] {
    for (;;) {
      bool all_retired_and_empty = true;
      for (int w = 0; w < kWriters; ++w) {
        ThreadBuffer* buffer = buffers[w];
        const uint64_t read = buffer->ReadIndex();
        const uint64_t write = buffer->WriteIndex();
        for (uint64_t i = read; i < write; ++i) {
          if (buffer->At(i).begin_ticks != next_expected[w]) ++out_of_order;
          ++next_expected[w];
        }
        buffer->Consume(write - read);
        if (buffer->state() != ThreadBuffer::kRetired || buffer->ReadIndex() != buffer->WriteIndex()) {
          all_retired_and_empty = false;
        }
      }
      if (all_retired_and_empty) break;
    }
  });
  for (std::thread& writer : writers) writer.join();
  reader.join();
  CHECK(out_of_order == 0);
  for (int w = 0; w < kWriters; ++w) {
    CHECK(next_expected[w] == kPerWriter);
    CHECK(buffers[w]->TakeDropped() == 0);
    ThreadRegistry::ReleaseIfDrained(buffers[w]);
  }
}

TEST_CASE("ResetAfterFork forgets the parent's records and other threads", "[thread_buffer]") {
  ThreadBuffer* survivor = ThreadRegistry::Claim(7);
  ThreadBuffer* other = ThreadRegistry::Claim(8);
  survivor->Append(Numbered(7, 1));
  other->Append(Numbered(8, 1));
  ThreadRegistry::ResetAfterFork(survivor, 9);
  CHECK(survivor->ReadIndex() == survivor->WriteIndex());
  CHECK(survivor->tid() == 9);
  CHECK(survivor->state() == ThreadBuffer::kOwned);
  CHECK(other->state() == ThreadBuffer::kFree);
  ThreadRegistry::Retire(survivor);
  ThreadRegistry::ReleaseIfDrained(survivor);
}
