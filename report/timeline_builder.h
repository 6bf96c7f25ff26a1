// TimelineBuilder: decodes one trace stream (frame by frame, as
// ReadTraceFile delivers them) into a ProcessTimeline. Pairs operation
// push/pop and range start/end, and resolves names once the whole stream is
// read (a string may be defined after the events that use it).
#ifndef RLSCOPE_REPORT_TIMELINE_BUILDER_H_
#define RLSCOPE_REPORT_TIMELINE_BUILDER_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/rule_file.h"
#include "format/wire_format.h"
#include "report/library_classifier.h"
#include "report/native_symbolizer.h"
#include "report/process_timeline.h"
#include "report/stack_inference.h"

namespace rlscope::report {

class TimelineBuilder {
 public:
  // Optional helpers (may be null): `classifier` decides the level of
  // Python's native callees (else all Native); `symbolizer` and
  // `operation_rules` infer operations from native stack samples (else
  // samples are ignored).
  TimelineBuilder(NameTable& names, LibraryClassifier* classifier = nullptr, NativeSymbolizer* symbolizer = nullptr,
                  const std::vector<OperationRule>* operation_rules = nullptr)
      : names_(names), classifier_(classifier), symbolizer_(symbolizer), operation_rules_(operation_rules) {}

  // CollectOverhead: also keep what the overhead correction needs (a site
  // per recorded event, the hooks' per-batch counts); off by default, as
  // it costs memory and time that uncorrected reports do not need.
  void CollectOverhead(bool collect) { collect_overhead_ = collect; }

  void AddFrame(const wire::Frame& frame);
  // Finish: closes what was left open at the end of the stream and returns
  // the timeline. The builder is spent afterwards.
  ProcessTimeline Finish();

 private:
  struct OpenOperation {
    int64_t begin_ns;
    uint32_t name_id;
    bool inferred;
    uint64_t token;  // rlscope.operation's; 0 for others.
    wire::OperationSource source;
    // Open when records were lost (OnRecordsLost): its pop may have been
    // among them. Then at most until `hole_ns`, unless its pop comes.
    bool before_hole = false;
    int64_t hole_ns = 0;
  };
  struct RawNativeCall {
    int64_t begin_ns;
    int64_t end_ns;
    uint64_t address;
    uint32_t code_id;
    uint16_t line;
  };
  // A kPythonUserLine instant: from `time_ns` on, the thread's innermost
  // user-code line.
  struct UserLineMark {
    int64_t time_ns;
    uint32_t code_id;
    uint16_t line;
  };
  struct RawInstanceStart {
    int64_t time_ns;
    uint32_t name_id;
  };
  struct OpenRange {
    size_t thread;  // Index of the starting thread.
    int64_t begin_ns;
    uint32_t name_id;
  };
  struct ThreadState {
    StackSamples stacks;  // For stack_inference.h, at Finish.
    std::vector<OpenOperation> open;
    std::vector<RawInstanceStart> instance_starts;  // Explicit operations entered, by raw name id.
    std::vector<RawNativeCall> native_calls;        // Classified at the end of their batch.
    // The classified calls' CPU intervals, in record order: added to the
    // thread's cpu_events at Finish, after its other events.
    IntervalList native_events;
    // Calls placed but not yet classified (ClassifyNativeCalls), by their
    // index in the thread's native_calls and in native_events.
    std::vector<std::pair<size_t, RawNativeCall>> deferred_calls;
    std::vector<UserLineMark> user_lines;  // In record (time) order; all of them, until Finish.
    IntervalList idle_spans;               // wire kThreadIdle; made Wait at Finish (idle_waits.h).
    bool saw_begin = false;
    bool saw_end = false;
    bool lost_records = false;  // Records were lost (OnRecordsLost): pops may miss their pushes.
    uint64_t lost_marked = 0;   // Drops the kRecordsLost markers told of (the rest ended the stream).
    int64_t first_ns = INT64_MAX;
    int64_t last_ns = INT64_MIN;
  };

  void AddHello(const wire::Hello& hello);
  void AddBatch(const wire::Batch& batch);
  void AddEvents(const wire::ThreadEvents& events);
  // The handlers of AddEvents, one per family of event kinds.
  void OnCudaCall(ThreadTimeline& thread, const wire::Event& event, int64_t begin, int64_t end);
  void OnOperationPush(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin);
  void OnOperationPop(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin);
  // CloseOperation: `open` becomes an interval ending at `end_ns`, among
  // the thread's inferred or explicit operations as it is.
  static void CloseOperation(ThreadTimeline& thread, const OpenOperation& open, int64_t end_ns);
  // OnRecordsLost: the thread's records were lost after `hole_ns` (its
  // last event before them; wire kRecordsLost). A pop among them would
  // leave its operation open for the rest of the run, so the operations
  // open there that a later pop cannot name (inferred ones, NVTX push/pop:
  // no token) end at the hole; a tokened one (rlscope.operation) stays
  // open, as its own pop, if it comes, proves it was, and ends at the hole
  // if none comes (Finish). Pops that then find nothing to close are the
  // lost pushes' and no problem of the stream.
  void OnRecordsLost(ThreadTimeline& thread, ThreadState& state, int64_t hole_ns);
  void OnRange(size_t index, ThreadState& state, const wire::Event& event, int64_t begin);
  void OnPython(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin, int64_t end);
  void OnTimedCall(ThreadTimeline& thread, const wire::Event& event, int64_t begin, int64_t end);
  void OnStackSample(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin, int64_t end);
  void OnLifecycle(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin);
  void AddGpuActivity(const wire::GpuActivity& activity);
  // GpuActivityName: the NameTable label of a GPU activity's display name.
  int32_t GpuActivityName(GpuActivityKind kind, uint32_t name_id, uint8_t detail);
  int32_t NewGpuActivityName(GpuActivityKind kind, uint32_t name_id, uint8_t detail);
  // Thread: the record of one thread instance (created on first sight).
  // Returns its index into process_.threads and thread_states_.
  size_t Thread(uint32_t tid, uint64_t instance);
  int32_t OperationLabel(uint32_t name_id);
  void AddSite(ThreadTimeline& thread, const OverheadSite& site) {
    if (collect_overhead_) thread.overhead_sites.push_back(site);
  }
  // AddOperationSite: the overhead site of an operation boundary from `source`.
  void AddOperationSite(ThreadTimeline& thread, wire::OperationSource source, int64_t time_ns);
  std::string StringOf(uint32_t id) const;
  // StringLabel: the NameTable label of string `id`'s text, looked up once
  // per id (native calls and CUDA calls repeat a few names millions of
  // times). Only in Finish, so that names are numbered in the order of a
  // whole stream's read, however it was read (run_decoding.h).
  int32_t StringLabel(uint32_t id);
  // ClassifyNativeCalls: the level and lines of the native calls recorded
  // so far, at the end of each batch, so that decoding a trace while it is
  // written (run_decoding.h) leaves little for Finish: a call is classified
  // by the library loaded at its address then (a later library at the
  // same address is not its own). A call whose module or string has not
  // come yet keeps its place and waits for a batch that brings it, for
  // FinishNativeCalls at most (`final`: no waiting). Locations stay raw
  // string ids until FinishNativeCalls.
  void ClassifyNativeCalls(ThreadTimeline& thread, ThreadState& state, bool final = false);
  // PlaceNativeCall: `raw`, from the library at `path` (null: none known),
  // as `call` and its CPU interval `event`.
  void PlaceNativeCall(const ThreadState& state, const RawNativeCall& raw, const std::string* path, NativeCall& call,
                       Interval& event);
  // Resolvable: whether `raw`'s string and (with a classifier) its
  // library, at `path`, are known.
  bool Resolvable(const RawNativeCall& raw, const std::string* path) const;
  // PlaceDeferredCalls: classifies the calls that waited and can be now
  // (`final`: all of them) into their places.
  void PlaceDeferredCalls(ThreadTimeline& thread, ThreadState& state, bool final);
  // FinishNativeCalls: classifies what waited, labels every call's
  // locations (in record order, as a whole-stream read would number
  // them), and adds the calls' intervals to the thread's cpu_events.
  void FinishNativeCalls(ThreadTimeline& thread, ThreadState& state);
  // ResolveHookedCollectives: names `thread`'s hooked communication calls
  // and keeps the collectives (hooked_communication.h). Only after the
  // whole stream is read (Finish).
  void ResolveHookedCollectives(ThreadTimeline& thread);
  // IsUserCode: whether the code object `code_id` is the user's own
  // (code_origin.h, from the file in its name), cached per id.
  bool IsUserCode(uint32_t code_id);
  // ClassifyCall: the category of a native call into the library at
  // `path` made by the code object `code_id` (library rules with caller=
  // tell calls by their caller's module).
  Category ClassifyCall(const std::string& path, uint32_t code_id);
  // InferFromStacks: operations of a thread without Python, from its
  // stack samples (stack_inference.h).
  void InferFromStacks(ThreadTimeline& thread, const ThreadState& state);

  NameTable& names_;
  LibraryClassifier* classifier_;
  NativeSymbolizer* symbolizer_;
  const std::vector<OperationRule>* operation_rules_;
  ModuleMap modules_;
  ProcessTimeline process_;
  bool collect_overhead_ = false;
  bool saw_hello_ = false;
  int64_t goodbye_ns_ = 0;
  int64_t last_event_ns_ = INT64_MIN;
  int64_t last_flush_ns_ = INT64_MIN;
  // The current batch's window [previous cut, this cut] (OverheadWindow).
  int64_t window_begin_ns_ = 0;
  int64_t window_end_ns_ = 0;
  absl::flat_hash_map<uint32_t, std::string> strings_;
  std::vector<ThreadState> thread_states_;  // Parallel to process_.threads.
  // The last list of loaded modules: path, begin, end, load bias.
  using ModuleKey = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;
  std::set<ModuleKey> last_modules_;
  absl::flat_hash_map<uint64_t, size_t> thread_index_;
  absl::flat_hash_map<uint64_t, OpenRange> open_ranges_;
  // Raw (string id, detail) of each process_.gpu_activities entry, named
  // at Finish (strings may arrive after the records that use them).
  std::vector<std::pair<uint32_t, uint8_t>> gpu_raw_names_;
  // Raw program string id of each process_.children entry, named at Finish.
  std::vector<uint32_t> child_program_ids_;
  absl::flat_hash_map<uint32_t, int32_t> string_labels_;
  absl::flat_hash_map<uint32_t, bool> user_code_;
  // ClassifyCall's, by library path, then code object (by the path's
  // text: modules_ may move its strings as it sorts or grows).
  absl::flat_hash_map<std::string, absl::flat_hash_map<uint32_t, Category>> call_categories_;
  // Display names of GPU activities by (kind, string id, detail): kernel
  // names are demangled once each, not once per launch.
  absl::flat_hash_map<uint64_t, int32_t> gpu_activity_labels_;
  uint64_t unbalanced_pops_ = 0;
  uint64_t unmatched_range_ends_ = 0;
  uint64_t unknown_events_ = 0;
  uint64_t implausible_events_ = 0;  // Timestamps no clock gives (damaged data).
  uint64_t hook_replacements_ = 0;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_TIMELINE_BUILDER_H_
