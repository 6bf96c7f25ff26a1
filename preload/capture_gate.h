// CaptureGate: rlscope run's capture windows. While capture is closed,
// Record() drops every event of a kind wire::RecordedWhileCaptureClosed
// says only a window holds (calls, CUDA API, waits, samples, ...): one
// predictable branch on a global flag, which stays open for a run without
// windows. Operation and range boundaries are still recorded, so the
// analysis knows every operation instance of the run, inside the windows
// and out.
//
// What opens and closes it (RLSCOPE_CAPTURE_* from the launcher):
//   - a timer: open from RLSCOPE_CAPTURE_OPEN_NS, closed for good from
//     RLSCOPE_CAPTURE_CLOSE_NS (absolute CLOCK_MONOTONIC ns, the same for
//     every process of the run: `--delay` and `--duration` count from the
//     run's start). The flusher checks it every flush interval, so an edge
//     lands up to that late (the edge records when it really happened);
//   - the Python API (rlscope.start()/stop()/capture()), when
//     RLSCOPE_CAPTURE_API is set (`--capture-range api`): closed until
//     the first start();
//   - operation instances (RLSCOPE_CAPTURE_OP, RLSCOPE_CAPTURE_SKIP,
//     RLSCOPE_CAPTURE_COUNT; `--capture-op NAME --skip N --capture M`):
//     open at the push of the operation's instance N+1 in this process,
//     closed for good at the push of instance N+M+1, so exactly M
//     instances begin inside. Counted where pushes are recorded (each
//     process its own; an env reset is not a step). With
//     RLSCOPE_CAPTURE_EVERY=P (`--every P`, M < P) the window repeats:
//     open at instances N+1, N+P+1, N+2P+1, ..., each for M instances;
//   - NVTX ranges of one name (RLSCOPE_CAPTURE_RANGE=NAME, `--capture-range
//     nvtx:NAME`): open while a range of that name is open on any thread
//     (push/pop or start/end ranges of the domains rlscope records, nested
//     ones counted, so the outermost pop closes);
//   - the CUDA profiler API (RLSCOPE_CAPTURE_PROFILER_API=1,
//     `--capture-range cudaProfilerApi`): open from cudaProfilerStart() (or
//     the driver's cuProfilerStart(), seen through CUPTI) until
//     cudaProfilerStop()/cuProfilerStop(); closed until the first start;
//   - a signal (RLSCOPE_CAPTURE_SIGNAL=N, `--capture-signal`): each one
//     toggles capture. Its handler only sets a flag (async-signal-safe);
//     the flusher toggles within one flush interval. A program that
//     installs its own handler for that signal replaces ours.
// After the timer's close, nothing opens capture again: the window ended.
//
// Every change of state is an edge (time, open or closed, reason) the
// flusher sends in its next batch (wire::CaptureEdge).
#ifndef RLSCOPE_PRELOAD_CAPTURE_GATE_H_
#define RLSCOPE_PRELOAD_CAPTURE_GATE_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "format/wire_format.h"

namespace rlscope::preload {

// Open unless a window was asked for and has not opened yet.
extern std::atomic<bool> g_capture_open;
// The string id of the operation whose instances place the window (0:
// none), and the slow path that counts one.
extern uint32_t g_capture_operation;
void CountCaptureInstance(uint64_t push_ticks);

// The string id of the NVTX range name whose ranges are the windows (0:
// none), and the slow paths that count one's begin and end.
// `ticks` 0: now, taken under the gate's lock, so that edges of ranges
// on several threads are in the order of their times.
extern uint32_t g_capture_range_name;
void NoteCaptureRangePush(bool begins, uint64_t ticks = 0);
void NoteCaptureRangeStart(uint64_t range_id, uint64_t ticks = 0);
void NoteCaptureRangeEnd(uint64_t range_id, uint64_t ticks = 0);
// Whether a start/end capture range is open (EndRange's check before the
// lock).
bool CaptureRangeIdsOpen();

inline bool CaptureOpen() { return g_capture_open.load(std::memory_order_relaxed); }

// NoteOperationPush: Record()'s look at every push (one compare).
inline void NoteOperationPush(uint32_t name_id, uint64_t push_ticks) {
  if (__builtin_expect(g_capture_operation != 0 && name_id == g_capture_operation, 0)) {
    CountCaptureInstance(push_ticks);
  }
}

class CaptureGate {
 public:
  // Init: reads RLSCOPE_CAPTURE_*, at start-up (before the flusher
  // starts), and installs the signal handler if asked to.
  static void Init();
  // ClosedAtStart: whether capture was closed as the process's stream
  // began: at Init, or in a fork() child at the fork (ResetAfterFork). The
  // Hello says it; every edge since follows in the stream's batches.
  static bool ClosedAtStart();
  // Set: opens or closes capture for `reason` (an edge if it changes).
  // Not from a signal handler. Returns whether capture is open after it.
  static bool Set(bool open, wire::CaptureReason reason);
  // Tick: the flusher's check of the timer and of pending signals.
  static void Tick(int64_t now_ns);
  // TakeEdges: the edges since the last call, oldest first (flusher);
  // their time_ns holds ticks, for the flusher to convert.
  static void TakeEdges(std::vector<wire::CaptureEdge>& into);
  // ApiControlled: whether rlscope.start()/stop() control capture.
  static bool ApiControlled();
  // ProfilerApiControlled: whether cudaProfilerStart()/Stop() do, and
  // OnProfilerApi, the hooks' report of one (`start`: Start, else Stop).
  static bool ProfilerApiControlled();
  static void OnProfilerApi(bool start);
  // ClosedSinceNs: when capture last closed (MonotonicNs; Init's time
  // when it began closed); meaningless while open.
  static int64_t ClosedSinceNs();
  // SetOpenListener: `listener` is called (on the thread that opens it, no
  // lock of Python's held) each time capture opens. One listener.
  static void SetOpenListener(void (*listener)());
  // ResetAfterFork: a fork() child keeps the parent's state but not its
  // pending edges (they are the parent's to send). Of the NVTX ranges that
  // hold a window open, the child has only the forking thread's push
  // ranges (reopened through NoteCaptureRangePush) and the start/end ones.
  static void ResetAfterFork();
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CAPTURE_GATE_H_
