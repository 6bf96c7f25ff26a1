// Small builders of hand-made timelines shared by the report unit tests.
#ifndef RLSCOPE_TEST_REPORT_TIMELINE_FIXTURES_H_
#define RLSCOPE_TEST_REPORT_TIMELINE_FIXTURES_H_

#include <cstdint>

#include "report/process_timeline.h"

namespace rlscope::report::fixtures {

// Thread: an empty thread alive over [begin, end].
inline ThreadTimeline Thread(int64_t begin, int64_t end) {
  ThreadTimeline thread;
  thread.begin_ns = begin;
  thread.end_ns = end;
  return thread;
}

}  // namespace rlscope::report::fixtures

#endif  // RLSCOPE_TEST_REPORT_TIMELINE_FIXTURES_H_
