// ProcessTimeline: what one traced process did, per thread, decoded from
// its trace stream(s) and ready for analysis. Names are resolved: labels of
// operations index the run-wide NameTable.
#ifndef RLSCOPE_REPORT_PROCESS_TIMELINE_H_
#define RLSCOPE_REPORT_PROCESS_TIMELINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/launcher_rank.h"
#include "report/category.h"
#include "report/interval.h"

namespace rlscope::report {

// NameTable: run-wide interning of operation names (and other names) to
// dense labels, so analysis compares integers.
class NameTable {
 public:
  int32_t Intern(std::string_view name);
  const std::string& Name(int32_t label) const { return names_[static_cast<size_t>(label)]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, int32_t> labels_;
};

// A Python -> native transition, classified: what it called into and which
// Python line called it.
struct NativeCall {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  Category category = Category::kNative;
  int32_t location = 0;  // NameTable label of "qualname (file:firstline)".
  uint32_t line = 0;
  // The innermost line of the user's own code that led to the call (the
  // line in train.py that called into torch): the caller itself when it is
  // the user's, kNoLabel when no user code was on the stack.
  int32_t user_location = kNoLabel;
  uint32_t user_line = 0;

  // The line the report shows for the call: the user's own where known,
  // else the calling one.
  int32_t shown_location() const { return user_location != kNoLabel ? user_location : location; }
  uint32_t shown_line() const { return user_location != kNoLabel ? user_line : line; }
};

// A hooked communication library call that is a collective
// (hooked_communication.h): gloo's, NCCL's or MPI's, as torch issues them
// from C++ with no Python call (DDP's gradient all-reduce).
struct HookedCollective {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int32_t function = 0;  // NameTable label of the function called.
  bool queued = false;   // Returns once queued on a device (NCCL): its end is not when the ranks met.
};

// NestedCalls: per native call (they nest properly), whether it lies
// inside another one. They are recorded as they return, inner ones first.
std::vector<bool> NestedCalls(const std::vector<NativeCall>& calls);

// kOperationUndecided: an owner not decided yet (GpuLaunchPoint).
inline constexpr int32_t kOperationUndecided = -2;

// A CUDA call seen by CUPTI (launch, copy, memset, graph launch): the
// thread that made it and when, so its GPU work can be traced back to the
// operation and Python line that caused it.
struct GpuLaunchPoint {
  int64_t time_ns = 0;  // The call's entry; for a nested driver call, its exit.
  uint32_t correlation_id = 0;
  bool nested = false;  // A driver call inside a runtime call: an alias id.
  int32_t api = 0;      // NameTable label of the function ("cudaLaunchKernel").
  // The operation that owns the call, when decided before the overhead
  // correction moved it (kOperationUndecided: by its time, at analysis;
  // kNoLabel: none). Moved times must not re-decide it (thread_analysis.h).
  int32_t operation = kOperationUndecided;
  // When the call returned, its work queued (measured: the correction
  // reads it before moving the times above, and leaves it). 0: unknown.
  int64_t return_ns = 0;
};

enum class GpuActivityKind : uint8_t { kKernel = 1, kMemcpy = 2, kMemset = 3 };

// One GPU activity (kernel, copy, memset) as CUPTI recorded it.
struct GpuActivity {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  GpuActivityKind kind = GpuActivityKind::kKernel;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
  int32_t name = 0;  // NameTable label: the kernel's demangled name, "Memcpy HtoD", "Memset".
  uint64_t bytes = 0;
};

// What a capture level reported about itself (wire::Notice).
struct CaptureNotice {
  std::string topic;   // "gpu"
  std::string status;  // "captured", "degraded", "missing"
  std::string message;
};

// Where rlscope's own work cost a thread time, for the overhead
// correction (overhead_correction.h). Each site is one recorded event whose
// hook costs a calibrated amount (or, for kMeasured, timed itself).
enum class OverheadSiteKind : uint8_t {
  kCudaHook,          // A CUDA runtime call the libcudart hook recorded: around [begin, end].
  kCupti,             // A call CUPTI's callback saw (api: which): inside [begin, end].
  kPythonTransition,  // A recorded Python -> native call: around [begin, end].
  kTrampoline,        // A hooked library call (simulator, --backend): around [begin, end].
  kPythonOperation,   // An inferred operation's push or pop: just before begin.
  kNvtxRange,         // An NVTX range's push or pop (start or end): just before begin.
  kMeasured,          // Timed by rlscope itself (stack samples, CUPTI start-up): exactly [begin, end].
};

struct OverheadSite {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  OverheadSiteKind kind = OverheadSiteKind::kMeasured;
  bool driver = false;     // kCupti: a driver API call (cu*), else runtime (cuda*).
  int32_t api = kNoLabel;  // kCupti, kCudaHook: NameTable label of the CUDA function.
};

// Hook work that left no event (wire::HookOverhead) within one batch's
// window: the correction spreads it over the thread's time there.
struct OverheadWindow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint16_t kind = 0;  // wire::OverheadKind.
  uint64_t count = 0;
  int64_t self_ns = 0;
};

// What the thread ran and waited for a CPU in [begin_ns, end_ns), and
// how many times it got one (wire kThreadCpuWait; report/cpu_contention.h).
struct CpuWait {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t ran_ns = 0;
  int64_t waited_ns = 0;
  int64_t runs = 0;
};

struct ThreadTimeline {
  uint32_t tid = 0;
  uint64_t instance = 0;  // Process-unique thread serial (tids get reused).
  std::string name;
  // Traced lifetime: from the thread's creation (the process start for its
  // first thread) to its exit or the end of the process.
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  // The thread ran Python under the hook: its base level is Python.
  bool python = false;
  // Operation intervals as recorded (may nest); label: NameTable label.
  // Explicit ones (NVTX, rlscope.operation) take precedence over inferred.
  IntervalList operations;
  IntervalList inferred_operations;
  // Set by the overhead correction for a thread that inherits operations
  // (InheritedOperations): the measured inherited timeline in this
  // thread's corrected clock, so its intervals keep the operations they
  // had when measured (the owner's timeline moved by the owner's overhead).
  std::optional<IntervalList> inherited_operations;
  // Set by the overhead correction too: the process's measured GPU-busy
  // intervals in this thread's corrected clock, within its counted time,
  // so its time keeps the resource (CPU or CPU+GPU) it had when measured.
  std::optional<IntervalList> gpu_busy;
  // Set by ApplyCaptureWindows: the parts of the thread's lifetime inside
  // a capture window, the only time its breakdown counts.
  std::optional<IntervalList> captured;
  // CPU category intervals as recorded (may nest); label: Category. In
  // OuterFirst order (flatten.h) once decoded.
  IntervalList cpu_events;
  std::vector<NativeCall> native_calls;
  // The thread's hooked communication calls that are collectives, in
  // record order (they do not nest: only the outermost is recorded).
  std::vector<HookedCollective> hooked_collectives;
  // Times each operation was entered from outside itself (an update method
  // and the backward step inside it, both backprop, count once), and where
  // each of those instances began (begin = end, label: the operation), so
  // the analysis can split an operation's time into its instances. Both are
  // filled by AddInstance only.
  std::map<int32_t, uint64_t> operation_instances;
  IntervalList instance_starts;
  uint64_t events = 0;
  uint64_t dropped = 0;
  uint64_t cuda_api_calls = 0;
  // CUDA calls CUPTI saw, in record order (by exit time).
  std::vector<GpuLaunchPoint> gpu_launches;
  // rlscope's own cost on this thread (overhead correction), in record order.
  std::vector<OverheadSite> overhead_sites;
  std::vector<OverheadWindow> overhead_windows;
  // Its waits for a CPU beside its run time, in time order (a few a
  // second): the correction scales rlscope's costs by them.
  std::vector<CpuWait> cpu_waits;
};

// AddInstance: the thread entered `operation` at `time_ns` (counted once).
inline void AddInstance(ThreadTimeline& thread, int32_t operation, int64_t time_ns) {
  ++thread.operation_instances[operation];
  thread.instance_starts.push_back({time_ns, time_ns, operation});
}

// ChildStartKind: wire::ChildStart, as the analysis reads it.
enum class ChildStartKind { kForked, kExecuted, kSpawned, kExecFailed };

// ChildStart: a child process this process started (kChildProcess).
struct ChildStart {
  int pid = 0;
  ChildStartKind how = ChildStartKind::kForked;
  std::string program;  // What it runs; empty for a fork (the same image).
  int64_t at_ns = 0;
};

struct ProcessTimeline {
  int pid = 0;
  int ppid = 0;
  int forked_from = 0;  // Non-zero for a fork() child without exec.
  std::string executable;
  std::vector<std::string> argv;
  uint64_t proc_start_ticks = 0;  // Kernel start time: same across exec.
  LauncherRank rank;              // Its rank as its launcher told it (Hello).
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  // CLOCK_REALTIME at begin_ns (Hello.start_unix_ns): how this host's
  // monotonic clock relates to the others' when runs of several nodes are
  // merged (job_merge.h). 0: not known.
  int64_t begin_unix_ns = 0;
  bool ended_cleanly = false;  // A Goodbye frame closed the (last) stream.
  // Streams that carried on after the program closed rlscope's socket
  // (Hello.continues_stream), and the events lost at those moments.
  bool continues_stream = false;
  uint32_t reconnections = 0;
  uint64_t reconnection_lost_events = 0;
  uint64_t recorded_events = 0;
  uint64_t dropped_events = 0;
  // In order of first appearance; one entry per thread instance, so a
  // reused tid appears twice.
  std::vector<ThreadTimeline> threads;
  // Things the user should know about this process's data: damaged
  // frames, unbalanced operation pops, operations left open, ...
  std::vector<std::string> problems;
  // Children it started, in record order per thread (lost_processes.h).
  std::vector<ChildStart> children;
  // GPU level (CUPTI): activities in delivery order (not sorted), the
  // records that were lost, CUPTI's own CPU overhead, and what capture
  // levels said about themselves.
  std::vector<GpuActivity> gpu_activities;
  uint64_t gpu_dropped = 0;
  int64_t cupti_overhead_ns = 0;
  std::vector<CaptureNotice> notices;
  // Capture windows (rlscope run --delay, --duration, --capture-range,
  // --capture-signal; preload/capture_gate.h): where capture opened
  // (label 1) or closed (label 0), begin = end = the time, in record
  // order; a stream that began closed starts with a closing edge at its
  // start. Empty: the whole process was captured.
  IntervalList capture_edges;
  // Set by ApplyCaptureWindows (capture_windows.h) for a process with
  // edges: the captured intervals, and the operations entered in the
  // whole process, captured or not (the instance counts above are then
  // the windows').
  std::optional<IntervalList> captured;
  std::map<int32_t, uint64_t> whole_run_instances;
};

// SameProcess: whether two streams come from one process (the same pid and
// kernel start time: an exec chain), not a reused pid.
bool SameProcess(const ProcessTimeline& a, const ProcessTimeline& b);

// MergeExecChain: merge the stream of an exec()'d image (`later`) into its
// predecessor's: the thread that called exec continues as the new image's
// first thread (same tid); the later image's command line wins; problems
// and counts add up. A reconnection's stream (`later.continues_stream`)
// continues every thread of the same image instead.
void MergeExecChain(ProcessTimeline& earlier, ProcessTimeline&& later);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_PROCESS_TIMELINE_H_
