// InstanceDurations: how long each instance of each operation took, from a
// thread's final operation timeline and where its instances began.
//
// An instance owns the operation's time from its start until the next
// instance of the same operation starts: what the thread spent in that
// operation in between, excluding time in other operations nested in it or
// run between its pieces (an update method whose forward and backward pass
// are separated by glue is one instance). So an operation's instance
// durations add up to its time in the thread's breakdown, and their mean is
// that time divided by the instance count. Time before the first start
// belongs to the first instance.
#ifndef RLSCOPE_REPORT_INSTANCE_DURATIONS_H_
#define RLSCOPE_REPORT_INSTANCE_DURATIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "report/interval.h"

namespace rlscope::report {

// InstanceDurations: operation label -> one duration per start of it, in
// start order. `timeline`: sorted, disjoint (OperationTimeline); `starts`:
// begin = the instance's start, label = its operation (any order).
// Operations without starts (start-up, teardown, inherited) are left out.
// `counted` (sorted, disjoint; capture windows), when given: only the
// instances begun inside it are returned, the others still owning their
// time (an instance begun before a window keeps what it ran inside it).
std::map<int32_t, std::vector<int64_t>> InstanceDurations(const IntervalList& timeline, IntervalList starts,
                                                          const IntervalList* counted = nullptr);

// InstanceStats: one operation's instances summarised. Percentiles are
// nearest-rank (the smallest duration at least that share of instances
// do not exceed), so each is a duration some instance had.
struct InstanceStats {
  std::string operation;
  uint64_t instances = 0;
  int64_t total_ns = 0;
  int64_t mean_ns = 0;
  int64_t p50_ns = 0;
  int64_t p95_ns = 0;
  int64_t max_ns = 0;
};

// SummariseInstances: the stats of `durations` (consumed: sorted in place).
InstanceStats SummariseInstances(std::string operation, std::vector<int64_t> durations);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_INSTANCE_DURATIONS_H_
