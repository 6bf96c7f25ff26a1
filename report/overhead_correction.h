// Overhead correction: turns a profiled process's timeline into the
// estimate of the unprofiled one, by removing rlscope's own cost where it
// occurred (docs/architecture.md, step 4 of the report).
//
// Per thread, every overhead site and window (process_timeline.h) becomes
// time to remove at a known place:
//   - recorded hook calls (CUDA hook, Python transition, trampoline): the
//     calibrated cost just after the call's end (where the hook's own
//     bookkeeping runs);
//   - CUPTI's inflation of a call: evenly over CUPTI's view of the call
//     (entry to exit callback), widened to the inflation if shorter;
//   - operation and NVTX boundaries (push or pop): just before the instant;
//   - what rlscope timed itself (stack samples, CUPTI start-up and final
//     flush): exactly its interval;
//   - unrecorded work counted per batch window (Python calls and builtins,
//     nested hooks, thread and code set-up, flusher wake-ups): spread
//     evenly over the thread's time in that window outside recorded calls
//     (where Python runs), nested hooks over the time inside them.
// Removal is a rate in [0, 1] per instant; the corrected time of t is t
// minus everything removed before t. Each thread's later events thus shift
// earlier, intervals shrink by what was removed inside them, and nothing
// moves before what preceded it. Where estimates exceed the time available
// (rate above 1) the excess is not removed but counted as unplaced.
//
// Attribution never changes: who owns each interval, CUDA call and GPU
// activity is decided on the measured timeline, before any time moves, and
// kept (each thread moves by its own overhead, so re-deciding by the moved
// times would match one thread's times against another's operations):
//   - each CUDA call's operation (GpuLaunchPoint::operation), so the GPU
//     work it launched keeps its owner;
//   - for a helper thread that inherits operations (thread_analysis.h),
//     the inherited timeline mapped into the helper's own corrected clock
//     (ThreadTimeline::inherited_operations): one copy, clipped to its
//     recorded calls (the time it counts), per helper that has any;
//   - which thread the others inherit from (ProcessCorrection);
//   - for every thread that counts any time, the measured GPU-busy
//     intervals in its corrected clock (ThreadTimeline::gpu_busy), so its
//     time keeps its resource, CPU or CPU+GPU: one copy per such thread,
//     clipped to what it counts (its life; a helper: its calls). On a
//     10 MB trace of the fake CUDA client (56,000 kernels, one helper) the
//     copies took the corrected report's peak from 37 to 42 MB.
// A thread's own intervals need nothing: one monotone map moves them and
// their operations alike. The GPU overlap views keep the measured ones
// (run_report.cc): GPU time is not corrected.
//
// GPU work keeps its length: each activity moves with the time its
// launching call moved, but never before the previous activity on its
// stream ends (a queued kernel cannot start earlier than its predecessor).
// Not modelled: a synchronizing call that waited for GPU work would, in the
// unprofiled run, wait longer if the CPU got there earlier; RL workloads
// keep the GPU mostly idle (README, the GPU level), so this is rare; see README.
#ifndef RLSCOPE_REPORT_OVERHEAD_CORRECTION_H_
#define RLSCOPE_REPORT_OVERHEAD_CORRECTION_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/overhead_model.h"
#include "report/cupti_call_speed.h"
#include "report/process_timeline.h"

namespace rlscope::report {

struct SiteOverhead {
  uint64_t events = 0;
  double ns = 0;         // Estimated cost.
  double spread_ns = 0;  // Its uncertainty from the calibration's spread.

  // Per event: the calibrated cost as this run used it.
  calibration::MeasuredCost per_event() const {
    return {events > 0 ? ns / static_cast<double>(events) : 0, events > 0 ? spread_ns / static_cast<double>(events) : 0,
            0, 0};
  }
  // Uncertain: a cost the calibration did not pin down (calibration::Uncertain).
  bool uncertain() const { return events > 0 && calibration::Uncertain(per_event()); }
};

// The site under which the correction removes the Python hook's timed
// time beyond its calibrated price (overhead_correction.cc, PythonHookFloor).
inline constexpr char kPythonHookFloorSite[] = "python_hook_timed";

// The sites of work the hook times itself (by_site names); all of it runs
// inside a Python hook callback.
inline constexpr char kThreadSetupSite[] = "thread_setup";  // A new thread's ring.
inline constexpr char kCodeSetupSite[] = "code_setup";      // First sight of a code object.
inline constexpr char kFlusherWakeSite[] = "flusher_wake";  // Waking the flusher.

// PricedInsideCallbacks: whether a by_site entry prices work that a Python
// hook callback does, and so lies within the callbacks' timed time: the
// Python sites but a process's start-up and exit, and the self-timed
// sites above. The one definition the floor (PythonHookFloor) and the
// report's check (python_hook_check.h) share.
bool PricedInsideCallbacks(std::string_view site);

struct ProcessCorrection {
  double estimated_ns = 0;  // rlscope's estimated cost on all threads.
  double removed_ns = 0;    // Of it, removed from the timelines.
  // Of that, given back to CUDA calls that waited for a GPU kept busy by
  // queued work: unprofiled, they would have waited that much longer.
  double wait_restored_ns = 0;
  double unplaced_ns = 0;  // Estimated but with no time left to remove it from.
  // Of the estimate, what the threads' waits for a CPU added to the
  // calibrated prices where the machine was busy (cpu_contention.h); the
  // by_site tallies are the prices unscaled.
  double cpu_wait_ns = 0;
  double python_cpu_wait_ns = 0;       // Of it, added to the Python hook's priced work.
  int64_t main_thread_removed_ns = 0;  // Removed before the process's end on its first thread.
  double main_thread_spread_ns = 0;
  // What the first thread's waits for a CPU made a cost paid at its start
  // (CpuContention::Scale): the process's fixed start-up and exit cost,
  // priced in CPU time like the rest, is scaled by it.
  double main_thread_start_scale = 1.0;
  // The thread whose operations helper threads inherit, decided on the
  // measured timeline (PrimaryOperationThread); -1: none.
  int primary_thread = -1;
  std::map<std::string, SiteOverhead> by_site;  // Site name (overhead_model.h) -> estimate.
  // Sites recorded here that the calibration has no cost for (not removed).
  std::map<std::string, uint64_t> uncalibrated;
  // The Python hook's callbacks timed in the run (one in
  // wire::kPythonHookSampleStride) and their time: not removed, their cost
  // is priced by the Python sites (python_hook_check.h compares the two).
  uint64_t python_hook_samples = 0;
  double python_hook_sample_ns = 0;
  // CUPTI's launch prices set to the run's launch speed, by calibrated
  // site (cupti_call_speed.h).
  std::map<std::string, CuptiCallSpeed> cupti_call_speed;
};

// The removal profile of one thread: a piecewise-linear map from profiled
// to corrected time. Exposed for tests.
class TimeCorrection {
 public:
  // A stretch [begin, end] from which `amount` ns are removed evenly.
  struct Removal {
    double begin = 0;
    double end = 0;
    double amount = 0;
  };
  // Times inside are doubles relative to `origin` (absolute CLOCK_MONOTONIC
  // nanoseconds outgrow a double's exact range after ~104 days of uptime).
  // `base`: time removed before `origin` by another timeline (the thread
  // that started this one), which every mapped time loses too.
  explicit TimeCorrection(int64_t origin = 0, double base = 0) : origin_(origin), base_(base) {}
  // All at once (tests, small inputs; origin 0).
  explicit TimeCorrection(const std::vector<Removal>& removals);
  // Rel: `t` as this map's relative time.
  double Rel(int64_t t) const { return static_cast<double>(t - origin_); }
  // Reserve: room for `stretches` Add and AddOrdered calls (one thread's
  // overhead sites and batch-window pieces), so that the steps do not
  // double into spare room.
  void Reserve(size_t stretches) { steps_.reserve(2 * stretches); }
  // Add: a stretch (relative times), in roughly time order (record order:
  // fastest); AddOrdered: one of a second series in strict time order
  // (batch windows), after every Add (an Add after it still works, at the
  // price of a full sort). Then Finish, once, before any lookup.
  void Add(double begin, double end, double amount);
  void AddOrdered(double begin, double end, double amount);
  void Finish();
  // Restore: after Finish, gives back `amount` ns of what was removed,
  // evenly over each [begin, end] (relative times; sorted, disjoint,
  // end > begin): time a wait would have lasted longer unprofiled
  // (RestoreWaits in overhead_correction.cc). A restored stretch runs
  // longer than it was measured.
  void Restore(const std::vector<Removal>& spans);

  // Removed: ns removed before relative time `t` by this map's own stretches.
  double Removed(double t) const;
  // Map: the corrected time of absolute time `t` (base included).
  int64_t Map(int64_t t) const;
  // Mapper: Map for a sequence of mostly increasing times (one event list),
  // in amortised constant time per call.
  class Mapper {
   public:
    explicit Mapper(const TimeCorrection& correction) : correction_(correction) {}
    int64_t operator()(int64_t t);

   private:
    const TimeCorrection& correction_;
    size_t hint_ = 0;
  };
  double unplaced_ns() const { return unplaced_ns_; }
  double removed_ns() const { return knots_.empty() ? 0 : knots_.back().value; }

 private:
  // A time and a value. Before Finish, a step: the removal rate changes by
  // `value` there. After, a knot of the map: `value` ns were removed
  // before `time`; between two knots at a constant rate (at most 1), none
  // after the last (a Restore may make it negative). One type, so Finish
  // turns steps into knots in place and a thread's correction never holds
  // both (they were 44 % of the report's peak memory).
  struct Point {
    double time;
    double value;
  };
  void AddStep(double begin, double end, double amount);
  double RemovedAt(size_t knot, double t) const;

  static constexpr size_t kNoOrdered = static_cast<size_t>(-1);
  int64_t origin_ = 0;
  double base_ = 0;
  std::vector<Point> steps_;           // Add's steps, then AddOrdered's from ordered_begin_.
  size_t ordered_begin_ = kNoOrdered;  // Where AddOrdered's series starts in steps_.
  bool interleaved_ = false;           // An Add came after an AddOrdered.
  std::vector<Point> knots_;
  double unplaced_ns_ = 0;
};

// CorrectProcess: shifts `process`'s timeline (threads, operations, CPU
// events, native calls, launches, GPU activities, end) to the estimated
// unprofiled one and returns what was removed. `python_version`
// ("3.11"; empty if the process ran no Python) selects the Python costs.
// Profiler-category events (rlscope's own time) are dropped.
ProcessCorrection CorrectProcess(ProcessTimeline& process, const calibration::OverheadModel& model,
                                 std::string_view python_version, const NameTable& names);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_OVERHEAD_CORRECTION_H_
