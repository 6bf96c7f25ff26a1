#include "preload/gpu_activity_queue.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace rlscope::preload;
namespace wire = rlscope::wire;

TEST_CASE("GPU activity pushed from several threads is taken once, with the drops", "[gpu-queue]") {
  std::vector<wire::GpuActivity> taken;
  GpuActivityQueue::TakeAll(taken);  // Start empty.
  constexpr int kThreads = 4, kPerThread = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i) {
        const wire::GpuActivity activity(i, i + 1, 0, static_cast<uint32_t>(t * kPerThread + i), 0, 0, 0, 1, 0);
        GpuActivityQueue::Push({&activity, 1});
      }
      GpuActivityQueue::AddDropped(2);
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(GpuActivityQueue::TakeAll(taken) == 2 * kThreads);
  REQUIRE(taken.size() == kThreads * kPerThread);
  std::vector<bool> seen(kThreads * kPerThread, false);
  for (const wire::GpuActivity& activity : taken) seen[activity.correlation_id()] = true;
  CHECK(std::count(seen.begin(), seen.end(), true) == kThreads * kPerThread);
  CHECK(GpuActivityQueue::TakeAll(taken) == 0);
  CHECK(taken.empty());
}

TEST_CASE("Capture notices are kept in order and truncated to their fields", "[gpu-queue]") {
  std::vector<CaptureNotice> notices;
  CaptureNotices::TakeAll(notices);
  CaptureNotices::Post("gpu", "missing", "libcupti.so.13 was not found");
  CaptureNotices::Post("gpu", "captured", std::string(1000, 'x'));
  CaptureNotices::TakeAll(notices);
  REQUIRE(notices.size() == 2);
  CHECK(std::string(notices[0].status) == "missing");
  CHECK(std::string(notices[0].message) == "libcupti.so.13 was not found");
  CHECK(std::string(notices[1].message).size() == sizeof(notices[1].message) - 1);
  CaptureNotices::TakeAll(notices);
  CHECK(notices.empty());
}
