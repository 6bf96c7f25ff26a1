// ThreadAnalysis: everything the report says about one thread, computed in
// one pass over its timeline:
//   breakdown    time per (operation, resource, category) - breakdown.h
//   transitions  how often each operation crossed from one stack level into
//                another (Python->Backend, Backend->CUDA API, ...), counted
//                where the inner level's interval begins
//   instances    how many times each operation was entered (the divisor of
//                "transitions per iteration")
//   lines        Python source lines by the native time they caused
//                (inclusive: nested native calls count in their caller too)
#ifndef RLSCOPE_REPORT_THREAD_ANALYSIS_H_
#define RLSCOPE_REPORT_THREAD_ANALYSIS_H_

#include <cstdint>
#include <map>
#include <tuple>

#include "breakdown.h"
#include "category.h"
#include "process_timeline.h"

namespace rlscope::report {

struct TransitionKey {
  int32_t operation = 0;
  Category from = Category::kPython;
  Category to = Category::kNative;
  friend auto operator<=>(const TransitionKey& a, const TransitionKey& b) {
    return std::tie(a.operation, a.from, a.to) <=> std::tie(b.operation, b.from, b.to);
  }
};

struct LineKey {
  int32_t operation = 0;
  int32_t location = 0;  // NameTable label of "qualname (file:firstline)".
  uint32_t line = 0;
  friend auto operator<=>(const LineKey& a, const LineKey& b) {
    return std::tie(a.operation, a.location, a.line) <=> std::tie(b.operation, b.location, b.line);
  }
};

struct LineCost {
  int64_t ns = 0;
  uint64_t calls = 0;
};

struct ThreadAnalysis {
  Breakdown breakdown;
  std::map<TransitionKey, uint64_t> transitions;
  std::map<int32_t, uint64_t> instances;  // Operation label -> times entered.
  std::map<LineKey, LineCost> lines;
};

// AnalyseThread: consumes the thread's event lists. `none_operation`: the
// NameTable label of "(none)".
ThreadAnalysis AnalyseThread(ThreadTimeline thread, int32_t none_operation);

// AddInto: sums a thread's analysis into its process's.
void AddInto(ThreadAnalysis& total, const ThreadAnalysis& part);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_THREAD_ANALYSIS_H_
