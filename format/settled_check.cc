#include "format/settled_check.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"

namespace rlscope::collector {

namespace {

uint64_t ThreadKey(const wire::ThreadEvents& events) {
  return events.instance() != 0 ? events.instance() : (uint64_t{1} << 63) | events.tid();
}

bool Covered(uint16_t kind) {
  return kind != static_cast<uint16_t>(wire::EventKind::kThreadBegin) &&
         kind != static_cast<uint16_t>(wire::EventKind::kNativeStackFrames);
}

}  // namespace

void SettledCheck::Visit(const wire::Frame& frame) {
  const wire::Batch* batch = frame.message_as_Batch();
  if (batch == nullptr) return;
  batch_sequence_ = batch->sequence();
  CheckEvents(*batch);
  ApplyClaims(*batch);
}

void SettledCheck::CheckEvents(const wire::Batch& batch) {
  if (batch_claim_ == 0 || batch.threads() == nullptr) return;
  for (const wire::ThreadEvents* thread : *batch.threads()) {
    if (thread == nullptr || thread->events() == nullptr) continue;
    const auto own = thread_claims_.find(ThreadKey(*thread));
    const int64_t bound = own != thread_claims_.end() ? own->second : batch_claim_;
    for (const wire::Event* event : *thread->events()) {
      if (!Covered(event->kind())) continue;
      ++checked_;
      if (event->begin_ns() >= bound) continue;
      if (violations_++ == 0) {
        first_violation_ = absl::StrFormat(
            "batch %d, thread %d (instance %d): an event of kind %d begins at %d ns, %d ns before "
            "the settled time %d",
            batch_sequence_, thread->tid(), thread->instance(), event->kind(), event->begin_ns(),
            bound - event->begin_ns(), bound);
      }
    }
  }
}

void SettledCheck::ApplyClaims(const wire::Batch& batch) {
  const int64_t claim = batch.settled_ns();
  if (claim == 0) return;
  ++claims_;
  const int64_t before = batch_claim_;
  batch_claim_ = std::max(batch_claim_, claim);
  std::vector<std::pair<uint64_t, int64_t>> listed;
  if (batch.threads() != nullptr) {
    for (const wire::ThreadEvents* thread : *batch.threads()) {
      if (thread != nullptr && thread->settled_ns() != 0) listed.emplace_back(ThreadKey(*thread), thread->settled_ns());
    }
  }
  // Threads listed before and not now are settled up to the batch's claim.
  for (auto& [key, bound] : thread_claims_) {
    if (std::none_of(listed.begin(), listed.end(), [key = key](const auto& entry) { return entry.first == key; })) {
      bound = std::max(bound, claim);
    }
  }
  // A thread's own claim holds with what earlier claims said of it.
  for (const auto& [key, own] : listed) {
    const auto it = thread_claims_.find(key);
    const int64_t earlier = it != thread_claims_.end() ? it->second : before;
    thread_claims_[key] = std::max(earlier, own);
  }
}

}  // namespace rlscope::collector
