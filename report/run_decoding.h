// RunDecoding: the decoding of one run directory's traces into a
// DecodedRun (decoded_run.h), which can start while `rlscope run` is still
// writing them: Follow() reads what each trace file holds so far, Finish()
// reads the rest once the run is over. Decoding as the run goes is what
// makes the report ready soon after the program ends (docs/architecture.md,
// section 3): the report stage's decoding was most of its time.
//
// The result is the one LoadRun gives (LoadRun is a RunDecoding followed
// by nothing): frames reach each file's TimelineBuilder in the file's
// order either way. The trace files are the truth, so what the collector
// could not write (a full disk) is missing from both alike.
//
// Memory: decoding holds every event, as LoadRun does, but during the run,
// beside the program. A decoding that follows a run stops following, and
// frees what it holds, once the analysis of what it has read would no
// longer fit in the memory available then with what it holds
// (memory_budget.h's RoomForAnalysis, at each Follow): Finish then says
// so and LoadRun decides, at the end, what can be analysed.
#ifndef RLSCOPE_REPORT_RUN_DECODING_H_
#define RLSCOPE_REPORT_RUN_DECODING_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/rule_file.h"
#include "format/trace_reader.h"
#include "report/decoded_run.h"
#include "report/library_classifier.h"
#include "report/native_symbolizer.h"
#include "report/timeline_builder.h"

namespace rlscope::report {

class RunDecoding {
 public:
  // Reads DIR/rules/ (problems go to the run's problems). `for_correction`:
  // also keep what the overhead correction needs (LoadRequest's meaning).
  RunDecoding(std::string run_dir, bool for_correction);
  RunDecoding(const RunDecoding&) = delete;
  RunDecoding& operator=(const RunDecoding&) = delete;

  // Follow: decodes what every trace file under DIR/trace/ holds now,
  // starting those that appeared since the last call. Returns false once
  // following has stopped for good (the memory budget; see above).
  bool Follow();

  // Finish: reads the listed trace files (DIR/trace/*.rlt, sorted) to
  // their ends, then DIR/meta.json and DIR/nvidia-smi.csv, and returns the
  // decoded run. nullopt when following stopped: decode afresh (LoadRun).
  std::optional<DecodedRun> Finish(const std::vector<std::filesystem::path>& files);

  bool for_correction() const { return for_correction_; }
  // following: not stopped (by the budget, Abandon or Finish).
  bool following() const { return !stopped_; }
  // HeldBytes: the memory the decoding holds: the growth of the
  // process's heap since it began (HeapInUse; in `rlscope run`, the rest
  // of the collector holds little); 0 where malloc does not say (under a
  // sanitizer's allocator), which only makes the check stricter.
  uint64_t HeldBytes() const;
  // Abandon: stops following and frees what is held.
  void Abandon();
  // The stream bytes the last Follow had read in all (the files' sizes
  // before compression).
  uint64_t followed_stream_bytes() const { return followed_stream_bytes_; }

 private:
  // One trace file's decoding.
  struct Trace {
    Trace(const std::filesystem::path& path, RunDecoding& run);
    TimelineBuilder builder;
    collector::TraceFollower follower;
  };
  Trace& TraceOf(const std::filesystem::path& path);

  std::string run_dir_;
  bool for_correction_;
  DecodedRun run_;  // Its names are interned by the builders as they go.
  RuleSet rules_;
  std::unique_ptr<LibraryClassifier> classifier_;
  NativeSymbolizer symbolizer_;
  std::map<std::filesystem::path, std::unique_ptr<Trace>> traces_;
  std::vector<std::string> rule_problems_;
  uint64_t followed_stream_bytes_ = 0;
  uint64_t heap_at_start_ = 0;
  bool stopped_ = false;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_RUN_DECODING_H_
