// libFuzzer target: arbitrary bytes as a trace file, through the reader and
// the timeline builder, as `rlscope report` reads DIR/trace/<pid>.rlt. Any
// input must end in frames, a damage note or an error; never a crash,
// a sanitizer finding or a hang (test/fuzz/CMakeLists.txt runs it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format/trace_reader.h"
#include "report/library_classifier.h"
#include "report/timeline_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rlscope::report::NameTable names;
  // A classifier with one rule, so Python's native callees are classified;
  // no symbolizer: it would open whatever paths the input names.
  static rlscope::report::LibraryClassifier classifier({{"Backend", "*torch*"}});
  static const std::vector<rlscope::OperationRule> operation_rules = {{"step", rlscope::GlobSet("*.step"), "", {}}};
  rlscope::report::TimelineBuilder builder(names, &classifier, nullptr, &operation_rules);
  builder.CollectOverhead(true);
  absl::StatusOr<rlscope::collector::TraceReadResult> read = rlscope::collector::ReadTraceBuffer(
      data, size, "fuzz.rlt", [&](const rlscope::wire::Frame& frame, uint64_t) { builder.AddFrame(frame); });
  if (read.ok()) builder.Finish();
  return 0;
}
