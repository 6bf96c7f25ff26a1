// GpuActivityQueue: hands GPU activity from CUPTI's buffer-completion
// callback (any thread, CUPTI's own or one that flushes) to the flusher.
// Not a hot path: a mutex and a vector. Bounded: past kMaxPending records
// (a flusher that cannot keep up), records are counted as dropped instead
// of growing memory without limit.
#ifndef RLSCOPE_PRELOAD_GPU_ACTIVITY_QUEUE_H_
#define RLSCOPE_PRELOAD_GPU_ACTIVITY_QUEUE_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "format/wire_format.h"

namespace rlscope::preload {

class GpuActivityQueue {
 public:
  static constexpr size_t kMaxPending = 4u << 20;  // 160 MiB of records.

  static void Push(std::span<const wire::GpuActivity> activities);
  // AddDropped: records lost before they reached the queue (CUPTI's own
  // drops, buffers we could not allocate).
  static void AddDropped(uint64_t count);
  // TakeAll: moves every pending record into `out` (cleared first) and
  // returns the drops counted since the previous call.
  static uint64_t TakeAll(std::vector<wire::GpuActivity>& out);
  // ResetAfterFork: the child starts empty (the records were the parent's).
  static void ResetAfterFork();
};

// CaptureNotices: what a capture level could not do (or did), for the
// report: "gpu"/"missing"/"libcupti.so.13 was not found ...". Posted rarely
// (start-up, failures); the flusher sends each once.
struct CaptureNotice {
  char topic[16];
  char status[16];
  char message[480];
};

class CaptureNotices {
 public:
  static void Post(std::string_view topic, std::string_view status, std::string_view message);
  static void TakeAll(std::vector<CaptureNotice>& out);
  static void ResetAfterFork();
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_GPU_ACTIVITY_QUEUE_H_
