// Recorder: the hot path. Hooks call Record*() to append one EventRecord to
// the calling thread's ring; nothing else happens here (no locks, no
// allocation after the thread's first event, no formatting, no getenv).
#ifndef RLSCOPE_PRELOAD_RECORDER_H_
#define RLSCOPE_PRELOAD_RECORDER_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "preload/capture_gate.h"
#include "preload/event_record.h"
#include "preload/thread_buffer.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

// Per-thread state. `__thread` on a POD (not C++ thread_local) so access is
// one %fs-relative load with no TLS wrapper call; initial-exec because the
// preload is loaded at start-up.
struct ThreadState {
  ThreadBuffer* buffer;  // Claimed lazily by the thread's first event.
  uint64_t born_ticks;   // Set by the pthread_create wrapper; 0 if unknown.
  int hook_depth;        // Re-entry guard: only the outermost hook records.
  bool untraced;         // Flusher thread, or a thread past its exit.
  bool name_is_os;       // The buffer's name came from the OS (not Python).
  // Inside a CUDA runtime hook that is recording the call as kCudaApi
  // (CUPTI's callback then only ties the call to its GPU work), and, when
  // CUPTI watches that function, its name id, which names CUPTI's view of
  // the driver call inside it (0 otherwise; preload/cupti_injection.h).
  bool in_recorded_cuda_api;
  uint32_t recorded_cuda_api_name;
  // Nesting of CUPTI API callbacks (a driver call inside a runtime call).
  uint16_t cupti_depth;
  // Inside the cudaProfilerStart/Stop hook, which makes the capture edge
  // itself (CUPTI's callbacks of the calls inside it make none).
  bool in_profiler_api_hook;
};
extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// True once the preload was configured by `rlscope run` (RLSCOPE_SOCKET set).
// Without it every hook is a plain pass-through.
extern bool g_recording;

// RegisterCurrentThread: slow path of the thread's first event.
ThreadBuffer* RegisterCurrentThread();

// ThisThreadBuffer: the calling thread's buffer, claimed at its first use
// (null when the thread is not to be traced, or no memory is left).
inline ThreadBuffer* ThisThreadBuffer() {
  ThreadBuffer* buffer = t_state.buffer;
  if (__builtin_expect(buffer == nullptr, 0)) buffer = RegisterCurrentThread();
  return buffer;
}

// MarkCallOpen: the calling thread opens a call of `family` that will be
// recorded at its end; call before reading its begin ticks. For a family
// whose caller knows it has nothing open (its own stack is empty): the
// mark is stored without looking. Claims the thread's buffer if it has
// none yet (the flusher must see the mark before the record).
inline void MarkCallOpen(ThreadBuffer::OpenFamily family) {
  if (ThreadBuffer* buffer = ThisThreadBuffer(); buffer != nullptr) {
    buffer->SetOpenSince(family, g_flush_epoch_ticks.load(std::memory_order_relaxed));
  }
}

// NoteCallOpen: MarkCallOpen where the family may be open already (a
// nested or interrupted caller). Returns whether it marked the family
// open: only then does the matching NoteCallClosed clear the mark.
inline bool NoteCallOpen(ThreadBuffer::OpenFamily family) {
  ThreadBuffer* buffer = ThisThreadBuffer();
  if (buffer == nullptr || buffer->OpenSince(family) != 0) return false;
  buffer->SetOpenSince(family, g_flush_epoch_ticks.load(std::memory_order_relaxed));
  return true;
}

// NoteCallClosed: the call NoteCallOpen marked has been recorded (or will
// never be): after its Record.
inline void NoteCallClosed(ThreadBuffer::OpenFamily family) {
  if (ThreadBuffer* buffer = t_state.buffer; buffer != nullptr) buffer->SetOpenSince(family, 0);
}

// MarkScope: NoteCallOpen/NoteCallClosed around a scope whose records are
// timed before they are appended, when `wanted`: the preload's own timed
// work (kOpenOther), instants (kOpenInstant), a CUDA runtime call.
class MarkScope {
 public:
  explicit MarkScope(ThreadBuffer::OpenFamily family, bool wanted = true)
      : family_(family), marked_(wanted && NoteCallOpen(family)) {}
  ~MarkScope() {
    if (marked_) NoteCallClosed(family_);
  }
  MarkScope(const MarkScope&) = delete;
  MarkScope& operator=(const MarkScope&) = delete;

 private:
  ThreadBuffer::OpenFamily family_;
  bool marked_;
};

inline void Record(wire::EventKind kind, uint32_t name_id, uint64_t begin_ticks, uint64_t end_ticks,
                   uint64_t payload = 0, uint16_t flags = 0) {
  // Outside a capture window only boundaries are kept (capture_gate.h);
  // pushes may place the window.
  if (kind == wire::EventKind::kOperationPush) NoteOperationPush(name_id, begin_ticks);
  if (__builtin_expect(!CaptureOpen(), 0) && !wire::RecordedWhileCaptureClosed(kind)) return;
  if (ThreadBuffer* buffer = ThisThreadBuffer(); buffer != nullptr) {
    buffer->Append(EventRecord{begin_ticks, end_ticks, name_id, kind, flags, payload});
  }
}

// Marked open like a call: its time is read before the record is
// appended, and the capture gate's lock, the thread's first registration
// or a page fault of the ring may come between. Only an instant that will
// be kept marks (a mark claims the thread's buffer).
inline void RecordInstant(wire::EventKind kind, uint32_t name_id, uint64_t payload = 0, uint16_t flags = 0) {
  const MarkScope mark(ThreadBuffer::kOpenInstant, CaptureOpen() || wire::RecordedWhileCaptureClosed(kind));
  const uint64_t now = NowTicks();
  Record(kind, name_id, now, now, payload, flags);
}

// CountNestedHook: a hook entered inside another records nothing but still
// costs its guard; counted for the correction.
inline void CountNestedHook() {
  if (ThreadBuffer* buffer = t_state.buffer; buffer != nullptr) buffer->CountOverhead(wire::OverheadKind::kNestedHook);
}

// HookScope: the re-entry guard. A hook records only when it is the
// outermost hook on its thread and recording is on.
class HookScope {
 public:
  HookScope() {
    const int depth = t_state.hook_depth++;
    outermost_ = depth == 0 && g_recording && !t_state.untraced;
    if (depth != 0) CountNestedHook();
  }
  ~HookScope() { --t_state.hook_depth; }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;
  bool recording() const { return outermost_; }

 private:
  bool outermost_;
};

// For the preload's own threads: never traced, never counted.
void MarkThreadUntraced();
// NameCurrentThread: a name that beats the OS one (Python's thread name).
void NameCurrentThread(std::string_view name);
// pthread_create without going through our own interposed wrapper.
int CreateUntracedThread(pthread_t* thread, void* (*start)(void*), void* arg);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_RECORDER_H_
