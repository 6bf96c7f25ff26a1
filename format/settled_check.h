// SettledCheck: whether a stream keeps its settled claims
// (rlscope_trace.fbs Batch.settled_ns): no event in a later batch begins
// before the latest claim made for its thread (its own
// ThreadEvents.settled_ns where a batch lists one, else the batch's).
// Thread births (kThreadBegin) and stack-frame records (addresses, not
// times) are outside the claim, as is GPU activity. Fed one stream's
// frames in order; for `rlscope dump --check-settled` and the tests.
#ifndef RLSCOPE_FORMAT_SETTLED_CHECK_H_
#define RLSCOPE_FORMAT_SETTLED_CHECK_H_

#include <cstdint>
#include <string>
#include <unordered_map>

#include "format/wire_format.h"

namespace rlscope::collector {

class SettledCheck {
 public:
  void Visit(const wire::Frame& frame);

  // Batches that made a claim.
  uint64_t claims() const { return claims_; }
  // Events checked against a claim made before their batch.
  uint64_t checked() const { return checked_; }
  uint64_t violations() const { return violations_; }
  // The first violation, for people ("" when none).
  const std::string& first_violation() const { return first_violation_; }

 private:
  void CheckEvents(const wire::Batch& batch);
  void ApplyClaims(const wire::Batch& batch);

  int64_t batch_claim_ = 0;
  // Thread key (instance, or tid for streams without instances) -> the
  // latest claim for it, once a batch has listed the thread.
  std::unordered_map<uint64_t, int64_t> thread_claims_;
  uint64_t batch_sequence_ = 0;
  uint64_t claims_ = 0;
  uint64_t checked_ = 0;
  uint64_t violations_ = 0;
  std::string first_violation_;
};

}  // namespace rlscope::collector

#endif  // RLSCOPE_FORMAT_SETTLED_CHECK_H_
