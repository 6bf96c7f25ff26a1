#include "breakdown.h"

#include <catch2/catch.hpp>

using namespace rlscope::report;

namespace {

constexpr int32_t kNone = 0;
constexpr int32_t kInference = 1;
constexpr int32_t kBackprop = 2;
constexpr int32_t kOptimizer = 3;
constexpr int32_t kCuda = static_cast<int32_t>(Category::kCudaApi);

int64_t At(const Breakdown& breakdown, int32_t operation, Category category) {
  const auto it = breakdown.find({operation, Resource::kCpu, category});
  return it == breakdown.end() ? 0 : it->second;
}

int64_t Total(const Breakdown& breakdown) {
  int64_t total = 0;
  for (const auto& [key, ns] : breakdown) total += ns;
  return total;
}

}  // namespace

TEST_CASE("A thread's lifetime is partitioned by operation and category", "[breakdown]") {
  ThreadTimeline thread;
  thread.begin_ns = 0;
  thread.end_ns = 100;
  // inference [10,30) with a CUDA call [12,20); backprop [40,90) containing
  // optimizer [60,80) with a CUDA call [65,70); a CUDA call outside [92,95).
  thread.operations = {{10, 30, kInference}, {40, 90, kBackprop}, {60, 80, kOptimizer}};
  thread.cpu_events = {{12, 20, kCuda}, {65, 70, kCuda}, {92, 95, kCuda}};
  const Breakdown breakdown = ComputeThreadBreakdown(thread, kNone, Category::kNative);
  CHECK(At(breakdown, kInference, Category::kCudaApi) == 8);
  CHECK(At(breakdown, kInference, Category::kNative) == 12);
  CHECK(At(breakdown, kBackprop, Category::kNative) == 30);  // Outer keeps only what the inner left.
  CHECK(At(breakdown, kOptimizer, Category::kCudaApi) == 5);
  CHECK(At(breakdown, kOptimizer, Category::kNative) == 15);
  CHECK(At(breakdown, kNone, Category::kCudaApi) == 3);
  CHECK(At(breakdown, kNone, Category::kNative) == 10 + 10 + 2 + 5);
  CHECK(Total(breakdown) == 100);  // Nothing dropped, nothing counted twice.
}

TEST_CASE("Events outside the thread's lifetime are clipped", "[breakdown]") {
  ThreadTimeline thread;
  thread.begin_ns = 50;
  thread.end_ns = 60;
  thread.operations = {{0, 100, kInference}};
  thread.cpu_events = {{40, 55, kCuda}};
  const Breakdown breakdown = ComputeThreadBreakdown(thread, kNone, Category::kPython);
  CHECK(At(breakdown, kInference, Category::kCudaApi) == 5);
  CHECK(At(breakdown, kInference, Category::kPython) == 5);
  CHECK(Total(breakdown) == 10);
}

TEST_CASE("An empty lifetime has an empty breakdown", "[breakdown]") {
  ThreadTimeline thread;
  thread.begin_ns = 10;
  thread.end_ns = 10;
  CHECK(ComputeThreadBreakdown(thread, kNone, Category::kNative).empty());
}
