// Operations of a native thread (no Python) from its stack samples
// (wire kNativeStack and kNativeStackFrames): each sample's innermost frame
// that an operation rule names (rule_file.h) is its operation, and a sample
// speaks for the time around it. Decoding collects the samples
// (StackSamples); StackInference decides once the stream is read, when
// every library's symbols and the operation names are known.
#ifndef RLSCOPE_REPORT_STACK_INFERENCE_H_
#define RLSCOPE_REPORT_STACK_INFERENCE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "format/rule_file.h"
#include "report/library_classifier.h"
#include "report/native_symbolizer.h"
#include "report/process_timeline.h"

namespace rlscope::report {

// StackSamples: one thread's samples as they arrive: a sample's record,
// then its frames, over as many records as it needs.
class StackSamples {
 public:
  struct Sample {
    int64_t time_ns;
    uint32_t first_frame;  // Index into frames().
    uint32_t frame_count;
  };
  // Begin: a sample at `time_ns` with `frame_count` frames, the first of
  // them `first_frame` (a sample's record carries one).
  void Begin(int64_t time_ns, uint32_t frame_count, uint64_t first_frame);
  // More: frames of the last sample (past its count: padding, ignored).
  void More(std::initializer_list<uint64_t> frames);
  // Interrupt: the last sample's missing frames were lost (records lost):
  // frames that follow belong to no sample until the next Begin.
  void Interrupt() { expected_ = 0; }

  const std::vector<Sample>& samples() const { return samples_; }
  const std::vector<uint64_t>& frames() const { return frames_; }  // Return addresses, innermost first.

 private:
  std::vector<Sample> samples_;
  std::vector<uint64_t> frames_;
  uint32_t expected_ = 0;  // Frames of the last sample still to arrive.
};

class StackInference {
 public:
  // A sample's operation covers the time halfway to its neighbour
  // samples, at most half this either side (a thread that stops making
  // transitions is not assumed to stay in its last operation forever).
  static constexpr int64_t kMaxSampleHoldNs = 10'000'000;

  // `classifier` may be null (no library is then the ML backend's).
  StackInference(ModuleMap& modules, LibraryClassifier* classifier, NativeSymbolizer& symbolizer,
                 const std::vector<OperationRule>& rules, NameTable& names)
      : modules_(modules), classifier_(classifier), symbolizer_(symbolizer), rules_(rules), names_(names) {}

  // Infer: appends to `inferred` the operations `samples` show over
  // [begin_ns, end_ns] (the thread's life), as intervals with NameTable
  // labels; a run of samples in one operation is one interval.
  void Infer(const StackSamples& samples, int64_t begin_ns, int64_t end_ns, IntervalList& inferred);

 private:
  // OperationOf: the operation of one sample, or kNoLabel.
  int32_t OperationOf(const StackSamples& samples, const StackSamples::Sample& sample);

  ModuleMap& modules_;
  LibraryClassifier* classifier_;
  NativeSymbolizer& symbolizer_;
  const std::vector<OperationRule>& rules_;
  NameTable& names_;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_STACK_INFERENCE_H_
