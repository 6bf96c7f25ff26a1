#include "preload/gpu_activity_queue.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

namespace rlscope::preload {

namespace {

// Heap-allocated and never destroyed: CUPTI may deliver buffers from exit
// paths after static destructors ran.
struct PendingActivity {
  std::mutex mutex;
  std::vector<wire::GpuActivity> records;
  uint64_t dropped = 0;
};
PendingActivity& Pending() {
  static PendingActivity* pending = new PendingActivity();
  return *pending;
}

struct PendingNotices {
  std::mutex mutex;
  std::vector<CaptureNotice> notices;
};
PendingNotices& Notices() {
  static PendingNotices* notices = new PendingNotices();
  return *notices;
}

void CopyTruncated(char* out, size_t size, std::string_view text) {
  const size_t length = std::min(size - 1, text.size());
  memcpy(out, text.data(), length);
  out[length] = '\0';
}

}  // namespace

void GpuActivityQueue::Push(std::span<const wire::GpuActivity> activities) {
  PendingActivity& pending = Pending();
  std::lock_guard<std::mutex> lock(pending.mutex);
  const size_t room = kMaxPending - std::min(kMaxPending, pending.records.size());
  const size_t taken = std::min(room, activities.size());
  pending.records.insert(pending.records.end(), activities.begin(), activities.begin() + taken);
  pending.dropped += activities.size() - taken;
}

void GpuActivityQueue::AddDropped(uint64_t count) {
  PendingActivity& pending = Pending();
  std::lock_guard<std::mutex> lock(pending.mutex);
  pending.dropped += count;
}

uint64_t GpuActivityQueue::TakeAll(std::vector<wire::GpuActivity>& out) {
  out.clear();
  PendingActivity& pending = Pending();
  std::lock_guard<std::mutex> lock(pending.mutex);
  out.swap(pending.records);
  const uint64_t dropped = pending.dropped;
  pending.dropped = 0;
  return dropped;
}

void GpuActivityQueue::ResetAfterFork() {
  // Another thread may have held the mutex at fork(): start over.
  new (&Pending()) PendingActivity();
}

void CaptureNotices::Post(std::string_view topic, std::string_view status, std::string_view message) {
  CaptureNotice notice;
  CopyTruncated(notice.topic, sizeof(notice.topic), topic);
  CopyTruncated(notice.status, sizeof(notice.status), status);
  CopyTruncated(notice.message, sizeof(notice.message), message);
  PendingNotices& notices = Notices();
  std::lock_guard<std::mutex> lock(notices.mutex);
  notices.notices.push_back(notice);
}

void CaptureNotices::TakeAll(std::vector<CaptureNotice>& out) {
  out.clear();
  PendingNotices& notices = Notices();
  std::lock_guard<std::mutex> lock(notices.mutex);
  out.swap(notices.notices);
}

void CaptureNotices::ResetAfterFork() { new (&Notices()) PendingNotices(); }

}  // namespace rlscope::preload
