// Wire format: how the preload's event stream is framed and what each event
// kind means. Compiled by both preload/ (writer) and collector/ (reader).
//
// Stream (one per traced process, over a Unix stream socket; the collector
// stores it as trace/<pid>.rlt, in compressed blocks: trace_blocks.h):
//
//   frame := uint32 little-endian byte length N, then N bytes of a FlatBuffers
//            `rlscope.wire.Frame` (schema: rlscope_trace.fbs, identifier RLST)
//   stream := Hello Batch* Goodbye?
//
// A stream without Goodbye belongs to a process that died or lost its
// connection; every complete frame before that point is valid. Readers accept
// protocol versions <= kProtocolVersion and refuse newer ones.
#ifndef RLSCOPE_PRELOAD_SCHEMA_WIRE_FORMAT_H_
#define RLSCOPE_PRELOAD_SCHEMA_WIRE_FORMAT_H_

#include <cstdint>

#include "rlscope_trace_generated.h"

namespace rlscope::wire {

inline constexpr uint16_t kProtocolVersion = 1;

// Frames larger than this are refused by the reader: a length prefix beyond
// it means corruption, not a real frame. The writer stays far below it.
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

// What an Event is. Intervals have begin_ns <= end_ns; instants have
// begin_ns == end_ns. Values are frozen: append, never renumber.
enum class EventKind : uint16_t {
  kInvalid = 0,
  // CPU time inside an intercepted CUDA runtime call. name_id: the API
  // function; payload: its cudaError_t result.
  kCudaApi = 1,
  // Instant: an operation (NVTX push range, rlscope.operation, inferred)
  // begins on this thread. name_id: operation name; flags: OperationSource;
  // payload: for NVTX, the domain's name id + 1 (0: the default domain);
  // for kPythonApi, a token its pop carries.
  kOperationPush = 2,
  // Instant: an operation of this thread ends: the one pushed with token
  // `payload` when non-zero, else the innermost open one.
  kOperationPop = 3,
  // Instant: a start/end range begins (may end on another thread).
  // name_id: operation name; payload: range id (unique within the process).
  kRangeStart = 4,
  // Instant: the range with id `payload` ends.
  kRangeEnd = 5,
  // Instant: the thread was created (or the process started, for its first
  // thread). Recorded once, when the thread first records anything.
  kThreadBegin = 6,
  // Instant: the thread exited.
  kThreadEnd = 7,
  // CPU time inside a hooked native library entry point (simulator
  // trampolines: mj_step, dWorldStep, ...). name_id: the symbol's name;
  // payload: the function's address.
  kSimulatorCall = 8,
  // A Python -> native transition: CPU time from a C_CALL to its
  // C_RETURN/C_EXCEPTION. payload: address of the C function called (the
  // collector classifies it by the module that holds it); name_id: the
  // calling Python code object ("qualname (file:firstline)"); flags: the
  // calling line (clamped to 65535).
  kPythonCall = 9,
  // Instant: the thread runs Python under rlscope's profile hook from here
  // on; its time outside native calls is Python time.
  kPythonThread = 10,
  // Python code running inside a native call (a callback from C into
  // Python: sorted(key=...), torch hooks, jax tracing): Python time again,
  // innermost-wins over the enclosing kPythonCall.
  kPythonFrame = 11,
  // A sampled native call stack of a thread that does not run Python,
  // taken at a transition (native_stack_sampler.h). begin: when it was
  // taken; end: when sampling was done (rlscope's time, which the corrected
  // report removes; streams before the correction existed have end == begin). name_id: the
  // number of frames N; payload: the innermost return address. The other
  // N-1 addresses follow in ceil((N-1)/3) kNativeStackFrames records.
  kNativeStack = 12,
  // Three more return addresses of the preceding kNativeStack, outward, in
  // begin_ns, end_ns and payload (raw addresses, not times: the flusher
  // does not convert them; 0 pads the last record).
  kNativeStackFrames = 13,
  // CPU time inside a backend C++ API function the main program called
  // (`--backend` rules; trampolines). name_id: the symbol's (mangled)
  // name; payload: the function's address.
  kBackendCall = 14,
  // Instant: something else (cProfile, sys.setprofile, torch.profiler with
  // stacks) replaced rlscope's Python profile hook on this thread: Python-
  // level capture stops here.
  kPythonHookReplaced = 15,
  // A CUDA runtime or driver call seen by CUPTI's callback API (only the
  // launch, copy, memset, synchronize and graph-launch calls). begin/end:
  // its entry and exit; name_id: the function; payload: CUPTI's correlation
  // id (GPU activities carry it); flags: CuptiApiFlags.
  kCuptiApi = 16,
  // CPU time rlscope itself spent in a program thread, not the program's,
  // timed where it happened: CUPTI's start-up inside the first CUDA call
  // (the driver runs InitializeInjection there), CUPTI's final flush at
  // exit. name_id: what it was. The corrected report removes it.
  kProfilerOverhead = 17,
  // Instant: this thread started a child process, so the analysis can name
  // a child whose own stream never arrived (killed before its first flush,
  // no collector, a scrubbed environment). payload: the child's pid;
  // flags: ChildStart; name_id: the program it runs (0 for a fork: the
  // parent's image). Readers that predate it ignore it.
  kChildProcess = 18,
  // A Python thread blocked: CPU-idle time from a C_CALL of a known blocking
  // C function (preload/blocking_calls.h: lock acquire, queue get, sleep,
  // select/poll, socket receive, os.read, waitpid) to its C_RETURN/
  // C_EXCEPTION. Fields as kPythonCall (payload: the C function; name_id:
  // the calling code object; flags: the calling line). The report counts
  // it as the thread's Wait, never as work. Readers that predate it skip it
  // (that time is then the thread's base level, as before).
  kPythonWait = 19,
  // Instant: the innermost frame of the user's own code (outside installed
  // packages and the standard library) on this thread is now at this line.
  // name_id: its code object ("qualname (file:firstline)"); flags: the
  // line (clamped to 65535). Recorded only when it changes, before a
  // kPythonCall made from library code: that call, and later ones from
  // library code until the next such instant, were caused by this line.
  // Readers that predate it ignore it (lines are then library lines).
  kPythonUserLine = 20,
  // Time in which the thread was blocked, seen from outside it: the
  // flusher reads each live thread's CPU clock, for one that ran at most
  // half of a sample span its schedstat run delay, and for one that barely
  // ran its state (preload/thread_idle.h), and sends as [begin, end) the time of one or
  // more sample spans in which the thread neither ran nor waited for a CPU
  // (each span's part placed at its start). Time that ends with the thread
  // runnable is held back until the thread runs again, so a span may come
  // in a later batch than the thread's own events of that time; a
  // thread's spans are disjoint and in time order. It catches waits no
  // hook sees (a pipe read by iteration); the analysis makes Wait of the
  // part outside the thread's native calls (report/idle_waits.h). Sent by
  // the flusher only for spans inside a capture window. Readers that
  // predate it skip it.
  kThreadIdle = 21,
  // Instant: records of this thread were lost right before this point (its
  // ring was full: they are counted in ThreadEvents.dropped). Written by the
  // ring itself before the first record it keeps after a drop, at that
  // record's begin, so the reader knows where the stream has a hole: an
  // operation pop lost there must not leave its operation open for the
  // rest of the run (report/timeline_builder.h). payload: how many were
  // lost in this hole. Readers that predate it skip it.
  kRecordsLost = 22,
  // CPU time inside a communication library's function (gloo's collectives
  // and rendezvous, the NCCL API, MPI) called from any other object
  // (preload/simulator_rules.h; trampolines): what a framework issues from
  // C++ with no Python call, such as DistributedDataParallel's gradient
  // all-reduce during backward. Fields as kBackendCall. The report counts
  // it as Communication. Readers that predate it skip it.
  kCommunicationCall = 23,
  // What a thread did with its time, seen from outside it: the flusher
  // reads each live thread's schedstat about every 200 ms and sends the
  // span since the last reading as [begin, end), with the CPU time the
  // thread ran in it and the time it waited for a CPU (its run delay) in
  // payload (CpuWaitPayload), and in name_id how many times it got a CPU
  // (each after a wait). Where the machine is busy, the overhead
  // correction scales rlscope's CPU costs by them
  // (report/cpu_contention.h). Readers that predate it skip it.
  kThreadCpuWait = 24,
};

// A kThreadCpuWait payload: the run and wait times in microseconds, 32
// bits each (clamped: 71 minutes a span).
constexpr uint64_t CpuWaitPayload(int64_t ran_ns, int64_t waited_ns) {
  auto micros = [](int64_t ns) {
    const int64_t us = ns < 0 ? 0 : (ns + 500) / 1000;
    return static_cast<uint64_t>(us > int64_t{0xffffffff} ? int64_t{0xffffffff} : us);
  };
  return (micros(ran_ns) << 32) | micros(waited_ns);
}
constexpr int64_t CpuWaitRanNs(uint64_t payload) { return static_cast<int64_t>(payload >> 32) * 1000; }
constexpr int64_t CpuWaitWaitedNs(uint64_t payload) { return static_cast<int64_t>(payload & 0xffffffffu) * 1000; }

// RecordedWhileCaptureClosed: the kinds a closed capture window still
// records (preload/capture_gate.h). Operation and range boundaries keep
// the operations, and so their instance counts, known for the whole run;
// thread lifetimes, Python threads, hook replacements and children keep
// the events inside a window readable. Everything timed (calls, Python
// callbacks, CUDA API, waits, stack samples, lines, rlscope's own cost)
// exists only inside a window.
constexpr bool RecordedWhileCaptureClosed(EventKind kind) {
  switch (kind) {
    case EventKind::kOperationPush:
    case EventKind::kOperationPop:
    case EventKind::kRangeStart:
    case EventKind::kRangeEnd:
    case EventKind::kThreadBegin:
    case EventKind::kThreadEnd:
    case EventKind::kPythonThread:
    case EventKind::kPythonHookReplaced:
    case EventKind::kChildProcess:
    case EventKind::kRecordsLost: return true;
    case EventKind::kInvalid:
    case EventKind::kCudaApi:
    case EventKind::kSimulatorCall:
    case EventKind::kPythonCall:
    case EventKind::kPythonFrame:
    case EventKind::kNativeStack:
    case EventKind::kNativeStackFrames:
    case EventKind::kBackendCall:
    case EventKind::kCommunicationCall:
    case EventKind::kCuptiApi:
    case EventKind::kProfilerOverhead:
    case EventKind::kPythonWait:
    case EventKind::kPythonUserLine:
    case EventKind::kThreadIdle:
    case EventKind::kThreadCpuWait: return false;
  }
  return false;
}

// CaptureEdge.reason: what opened or closed a capture window. Values are
// frozen.
enum class CaptureReason : uint8_t {
  kTimer = 0,        // rlscope run --delay / --duration.
  kApi = 1,          // rlscope.start() / rlscope.stop() / rlscope.capture().
  kSignal = 2,       // The capture signal (rlscope run --capture-signal).
  kInstances = 3,    // Operation instances (rlscope run --capture-op, --skip, --capture).
  kNvtxRange = 4,    // NVTX ranges of one name (rlscope run --capture-range nvtx:NAME).
  kProfilerApi = 5,  // cudaProfilerStart/Stop (rlscope run --capture-range cudaProfilerApi).
};

// Event.flags of kChildProcess: how the child started. Values are frozen.
enum class ChildStart : uint16_t {
  kForked = 0,      // fork() returned the child's pid in the parent.
  kExecuted = 1,    // A vfork() child (it shares our memory) is calling exec.
  kSpawned = 2,     // posix_spawn[p]() returned the child's pid.
  kExecFailed = 3,  // That vfork() child's exec failed: it never runs a new image.
};

// HookOverhead.kind: hook work that leaves no event of its own. The
// correction (report/overhead_correction.h) removes it from the thread's
// timeline within the batch's window. Values are frozen.
enum class OverheadKind : uint16_t {
  // Counted, not timed (a timestamp pair would cost as much as the work;
  // the per-call cost comes from `rlscope calibrate`):
  kPythonCall = 1,     // A Python function call + return the hook saw and did not record.
  kPythonBuiltin = 2,  // A C call into the interpreter itself (not a transition).
  kNestedHook = 3,     // A hooked library call inside another hooked call.
  // Timed by the hook itself (self_ns), rare and slow:
  kThreadSetup = 4,  // A thread's first event: claiming (mapping) its ring.
  kCodeSetup = 5,    // The Python hook's first sight of a code object: names, rule match.
  kFlusherWake = 6,  // Waking the flusher when a ring is half full (a futex syscall).
  // Counted (sys.monitoring, CPython 3.12+): a call of a Python function
  // seen at its call site (its start is counted apart, as kPythonCall,
  // where it is watched at all).
  kPythonCallSite = 7,
  // Timed, not removed: one in kPythonHookSampleStride of the Python hook's
  // callbacks on the thread, timed from its entry to its exit (count: the
  // callbacks timed; self_ns: their time). Their cost is priced already
  // (the counted kinds above, the events recorded): this is the hook's own
  // time in the real run, to check those prices against.
  kPythonHookSample = 8,
};
inline constexpr int kOverheadKindCount = 9;  // Array size: kinds are 1..8.
// One in kPythonHookSampleStride callbacks of a thread is timed, on
// average (the gaps between timed ones vary, preload/python_hook_sample.h);
// 256 keeps the two clock reads (about 20 ns) below 0.1 ns a callback.
inline constexpr uint32_t kPythonHookSampleStride = 256;

// Event.flags of kCuptiApi.
enum CuptiApiFlags : uint16_t {
  kCuptiDriverApi = 1,  // Driver API (cu*), else runtime API (cuda*).
  // The call ran inside a CUDA runtime hook that recorded it as kCudaApi:
  // its CPU time is counted there; this event only ties it to its GPU work.
  kCuptiSeenByInterposer = 2,
  // A driver call CUPTI saw inside a runtime call it also saw: no time of
  // its own (the enclosing call has it); its correlation id is an alias of
  // the enclosing call's (copies and memsets may carry either).
  kCuptiNested = 4,
};

// GpuActivity.kind. Values are frozen.
enum class GpuActivityKind : uint8_t {
  kKernel = 1,
  kMemcpy = 2,
  kMemset = 3,
  // CPU time CUPTI spent on itself (buffer flushes, instrumentation).
  kCuptiOverhead = 4,
};

// Where an operation boundary came from (Event.flags of kOperationPush and
// kRangeStart). Explicit sources (NVTX, the rlscope.operation API) take
// precedence over inferred ones in the analysis.
enum class OperationSource : uint16_t {
  kNvtx = 1,
  kPythonApi = 2,  // `with rlscope.operation("name"):`
  kInferred = 3,   // Python stack rules (scripts/rules, --rules FILE).
};

// GpuActivity.detail of kCuptiOverhead: CUPTI's CUpti_ActivityOverheadKind
// squeezed into a byte. Driver kinds (1..127) stay as they are; CUPTI's own
// kinds (N << 16) become 0x80 | N.
inline constexpr uint8_t EncodeOverheadKind(uint32_t kind) {
  return kind < 0x80 ? static_cast<uint8_t>(kind) : static_cast<uint8_t>(0x80 | ((kind >> 16) & 0x7f));
}

static_assert(sizeof(Event) == 32, "wire::Event is a frozen 32-byte struct");
static_assert(sizeof(GpuActivity) == 40, "wire::GpuActivity is a frozen 40-byte struct");
static_assert(alignof(Event) == 8, "wire::Event must stay 8-byte aligned");
static_assert(sizeof(CaptureEdge) == 16, "wire::CaptureEdge is a frozen 16-byte struct");

}  // namespace rlscope::wire

#endif  // RLSCOPE_PRELOAD_SCHEMA_WIRE_FORMAT_H_
