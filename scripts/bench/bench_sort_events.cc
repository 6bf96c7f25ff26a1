// bench_sort_events: sorting a thread's decoded CPU events into OuterFirst
// order (report/flatten.h), as decoding does once per thread. Events are
// recorded as they end, so a native call comes right after the 0-3 CUDA
// calls it holds; the list is made so, then sorted by SortOuterFirst and,
// for comparison, by std::stable_sort (what decoding did before). Best of
// 5 each, single-threaded (pin it with taskset for steadier figures).
//
//   bench_sort_events [CALLS]   (default 500000 native calls, ~1.25 M events)
//
// Prints: events, stable_sort_ms, sort_outer_first_ms.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "report/flatten.h"

namespace {

using rlscope::report::Interval;
using rlscope::report::IntervalList;

IntervalList RecordedAsTheyEnd(size_t calls) {
  std::mt19937 rng(1);
  IntervalList events;
  int64_t t = 0;
  for (size_t i = 0; i < calls; ++i) {
    const int64_t begin = t;
    int64_t inner = begin + 100;
    for (unsigned k = rng() % 4; k > 0; --k) {
      events.push_back({inner, inner + 500, 2});
      inner += 700;
    }
    events.push_back({begin, inner + 100, 1});
    t = inner + 300;
  }
  return events;
}

template <typename Sort>
double BestMs(const IntervalList& events, Sort sort) {
  double best = 1e300;
  for (int repetition = 0; repetition < 5; ++repetition) {
    IntervalList copy = events;
    const auto start = std::chrono::steady_clock::now();
    sort(copy);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t calls = argc > 1 ? strtoull(argv[1], nullptr, 10) : 500'000;
  const IntervalList events = RecordedAsTheyEnd(calls);
  const double stable = BestMs(
      events, [](IntervalList& list) { std::stable_sort(list.begin(), list.end(), rlscope::report::OuterFirst); });
  const double outer_first = BestMs(events, [](IntervalList& list) { rlscope::report::SortOuterFirst(list); });
  printf("events %zu\nstable_sort_ms %.1f\nsort_outer_first_ms %.1f\n", events.size(), stable, outer_first);
  return 0;
}
