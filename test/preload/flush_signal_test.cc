#include "preload/flush_signal.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "preload/tick_clock.h"

using rlscope::preload::FlushSignal;
using rlscope::preload::MonotonicNs;

namespace {

// FakeFlusher: a flusher thread that sends a frame every `every` for
// `frames` frames, then finishes its flushes (WaitFor, in a loop until
// `done`: a crash's request may wait for the flush after the one under way).
std::thread FakeFlusher(int frames, std::chrono::milliseconds every, const std::atomic<bool>& done) {
  return std::thread([frames, every, &done] {
    for (int i = 0; i < frames && !done.load(); ++i) {
      std::this_thread::sleep_for(every);
      FlushSignal::NoteProgress();
    }
    while (!done.load()) FlushSignal::WaitFor(1);
  });
}

double SecondsSince(int64_t start_ns) { return static_cast<double>(MonotonicNs() - start_ns) / 1e9; }

}  // namespace

TEST_CASE("the crash's wait ends soon when the flusher sends nothing", "[flush_signal]") {
  FlushSignal::Reset();
  const int64_t start = MonotonicNs();
  CHECK_FALSE(FlushSignal::RequestAndAwait(/*stall_ms=*/100, /*limit_ms=*/20000));
  const double waited = SecondsSince(start);
  CHECK(waited >= 0.1);
  CHECK(waited < 10.0);  // Far below the limit: the stall ended it.
}

TEST_CASE("the crash waits for a flush that keeps sending past the stall time", "[flush_signal]") {
  FlushSignal::Reset();
  // 1.5 s of sending, a frame every 50 ms: three times the stall time.
  std::atomic<bool> done{false};
  const int64_t start = MonotonicNs();  // Before the flusher's frames begin.
  std::thread flusher = FakeFlusher(30, std::chrono::milliseconds(50), done);
  CHECK(FlushSignal::RequestAndAwait(/*stall_ms=*/500, /*limit_ms=*/60000));
  CHECK(SecondsSince(start) >= 1.5);
  done.store(true);
  flusher.join();
}

TEST_CASE("the crash's wait ends at its limit, even while the flusher sends", "[flush_signal]") {
  FlushSignal::Reset();
  std::atomic<bool> done{false};
  std::thread flusher = FakeFlusher(1000, std::chrono::milliseconds(10), done);  // 10 s or more.
  const int64_t start = MonotonicNs();
  CHECK_FALSE(FlushSignal::RequestAndAwait(/*stall_ms=*/5000, /*limit_ms=*/300));
  CHECK(SecondsSince(start) >= 0.3);
  done.store(true);
  flusher.join();
}
