// The C++ halves of the trampolines: the stub registry, the enter/leave
// callbacks of the common entry/exit (trampoline_x86_64.S) and the
// personality routine that keeps the shadow stack right under exceptions.
//
// LIMITATIONS (what a signature-blind trampoline cannot or does not do):
// - C++ exceptions and forced unwinds (pthread_cancel, pthread_exit) through
//   a hooked call work: the exit's CFI describes the caller's frame and the
//   personality routine pops the entry (the interval ends at the unwind).
//   Unwinders that only follow frame pointers see the exit stub instead of
//   the hooked function's caller.
// - longjmp/siglongjmp out of a hooked call skips the exit: the entry stays
//   behind and the thread's hook depth stays raised. The next hooked call on
//   the thread discards such an entry when its frame is provably gone: its
//   return slot is at or below the new call's stack position and no longer
//   holds our exit address. Until then that thread's calls are passed
//   through unrecorded. No interval is recorded for the abandoned call.
// - Only the low 128 bits of vector registers are saved: a hooked function
//   taking or returning __m256/__m512 by value may see their upper halves
//   cleared (the C++ callbacks may run AVX code in libc on a thread's first
//   event). Simulator APIs pass no such types.
// - The x87 stack is never touched, so long double results survive; the
//   callbacks must stay free of x87 code (no long double arithmetic here).
// - A context switch (swapcontext, green threads) inside a hooked call to
//   another stack that then calls a hooked function is handled like a signal
//   handler on an alternate stack: the live entry is kept (its slot still
//   holds our exit address), the new call passes through.
#include "preload/trampoline.h"

#include <pthread.h>
#include <unwind.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "preload/native_stack_sampler.h"
#include "preload/problem_notice.h"
#include "preload/raw_log.h"
#include "preload/recorder.h"
#include "preload/string_table.h"
#include "preload/tick_clock.h"

extern "C" {
// Defined in trampoline_x86_64.S.
extern const char rlscope_trampoline_stubs[];
extern const char rlscope_trampoline_stubs_end[];
extern const char rlscope_trampoline_exit[];
// Read by the stubs (rip-relative), so hidden and with C linkage.
__attribute__((visibility("hidden")))
rlscope::preload::TrampolineSlot rlscope_trampoline_slots[RLSCOPE_TRAMPOLINE_CAPACITY];
}

namespace rlscope::preload {

namespace {

struct ShadowStack {
  ShadowEntry entries[Trampolines::kShadowDepth];
  uint32_t depth;
  // Set while enter/leave edit the stack: a signal handler that calls a
  // hooked function meanwhile passes through instead of racing the edit.
  bool busy;
};
// Initial-exec like t_state: one %fs-relative access, no TLS wrapper call.
__thread ShadowStack t_shadow __attribute__((tls_model("initial-exec")));

pthread_mutex_t g_registry_mutex = PTHREAD_MUTEX_INITIALIZER;
// Published with release once the slot is filled: For() callers on other
// threads, and TargetOf, read it with acquire.
std::atomic<int> g_stub_count{0};
std::atomic<bool> g_full_logged{false};
std::atomic<bool> g_fork_handlers_registered{false};

// fork() while another thread holds the registry lock would leave the
// child's copy locked forever: hold it across the fork instead.
void LockForFork() { pthread_mutex_lock(&g_registry_mutex); }
void UnlockAfterFork() { pthread_mutex_unlock(&g_registry_mutex); }

void* StubAddress(int index) {
  return const_cast<char*>(rlscope_trampoline_stubs) + index * RLSCOPE_TRAMPOLINE_STUB_BYTES;
}

// IsAbandoned: `entry` belongs to a frame that no longer exists, seen from
// a new hooked call whose return address sits at `return_slot` on this
// thread. A live hooked frame below us on the same stack has its slot above
// ours; one whose slot is at or below ours is gone, unless we run on another
// stack (signal handler on an alternate stack, coroutine) -- then its slot
// still holds our exit address, which a reused stack slot does not.
bool IsAbandoned(const ShadowEntry& entry, void** return_slot) {
  if (entry.return_slot > return_slot) return false;
  return *entry.return_slot != static_cast<const void*>(rlscope_trampoline_exit);
}

// EndCall: the hooked call of `entry` is over (returned or unwound).
void EndCall(ShadowEntry* entry, uint64_t end_ticks) {
  const TrampolineSlot* slot = entry->slot;
  const uint64_t begin_ticks = entry->begin_ticks;
  ShadowStack& stack = t_shadow;
  // The mark any of the popped calls made (recorder.h NoteCallOpen).
  bool marked_open = false;
  for (const ShadowEntry* popped = entry; popped < stack.entries + stack.depth; ++popped) {
    marked_open |= popped->marked_open;
  }
  stack.busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // Pops this call and anything above it (entries of calls skipped by a
  // longjmp inside this one).
  stack.depth = static_cast<uint32_t>(entry - stack.entries);
  t_state.hook_depth = 0;  // Only an outermost call (depth 0) takes an entry.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  stack.busy = false;
  if (g_recording && !t_state.untraced) {
    Record(static_cast<wire::EventKind>(slot->event_kind), slot->name_id, begin_ticks, end_ticks,
           reinterpret_cast<uint64_t>(slot->target));
  }
  if (marked_open) NoteCallClosed(ThreadBuffer::kOpenTrampoline);
}

}  // namespace

void* Trampolines::For(void* target, const char* name, wire::EventKind kind) {
  if (target == nullptr) return nullptr;
  if (IsStub(target)) return target;  // Already ours: never wrap twice.
  if (!g_fork_handlers_registered.exchange(true)) pthread_atfork(&LockForFork, &UnlockAfterFork, &UnlockAfterFork);
  pthread_mutex_lock(&g_registry_mutex);
  const int count = g_stub_count.load(std::memory_order_relaxed);
  void* stub = nullptr;
  for (int i = 0; i < count && stub == nullptr; ++i) {
    if (rlscope_trampoline_slots[i].target == target) stub = StubAddress(i);
  }
  if (stub == nullptr && count < kCapacity) {
    rlscope_trampoline_slots[count].target = target;
    rlscope_trampoline_slots[count].name_id = StringTable::Intern(name);
    rlscope_trampoline_slots[count].event_kind = static_cast<uint32_t>(kind);
    g_stub_count.store(count + 1, std::memory_order_release);
    stub = StubAddress(count);
  }
  pthread_mutex_unlock(&g_registry_mutex);
  if (stub == nullptr && !g_full_logged.exchange(true)) {
    ReportProblem("trampolines",
                  "simulator hooks: all %d trampolines are in use; %s and later functions are not recorded", kCapacity,
                  name);
  }
  return stub;
}

bool Trampolines::IsStub(const void* address) {
  const char* p = static_cast<const char*>(address);
  return p >= rlscope_trampoline_stubs && p < rlscope_trampoline_stubs_end &&
         (p - rlscope_trampoline_stubs) % RLSCOPE_TRAMPOLINE_STUB_BYTES == 0;
}

void* Trampolines::TargetOf(const void* address) {
  if (!IsStub(address)) return nullptr;
  const int index =
      static_cast<int>((static_cast<const char*>(address) - rlscope_trampoline_stubs) / RLSCOPE_TRAMPOLINE_STUB_BYTES);
  if (index >= g_stub_count.load(std::memory_order_acquire)) return nullptr;
  return rlscope_trampoline_slots[index].target;
}

int Trampolines::Count() { return g_stub_count.load(std::memory_order_acquire); }

int Trampolines::ShadowDepth() { return static_cast<int>(t_shadow.depth); }

}  // namespace rlscope::preload

using rlscope::preload::ShadowEntry;
using rlscope::preload::ShadowStack;
using rlscope::preload::Trampolines;
using rlscope::preload::TrampolineSlot;

// Called by the common entry with every argument register saved. Returns
// the shadow entry when this call is to be recorded (the assembly then
// routes the return through the exit), null to pass straight through.
extern "C" __attribute__((visibility("hidden"))) ShadowEntry* rlscope_trampoline_enter(const TrampolineSlot* slot,
                                                                                       void** return_slot) {
  using namespace rlscope::preload;
  if (!g_recording || t_state.untraced) return nullptr;
  ShadowStack& stack = t_shadow;
  if (stack.busy) return nullptr;  // A signal handler interrupted enter/leave.
  stack.busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t depth = stack.depth;
  while (depth > 0 && IsAbandoned(stack.entries[depth - 1], return_slot)) {
    --depth;
    if (t_state.hook_depth > 0) --t_state.hook_depth;  // The raise it left behind.
    // Never recorded: its mark goes with it (the new call marks afresh).
    if (stack.entries[depth].marked_open) NoteCallClosed(ThreadBuffer::kOpenTrampoline);
  }
  stack.depth = depth;
  ShadowEntry* entry = nullptr;
  // Only the outermost hook of a thread records (as HookScope): a hooked
  // call made inside another, or inside a CUDA hook, is part of it.
  if (t_state.hook_depth == 0 && depth < static_cast<uint32_t>(Trampolines::kShadowDepth)) {
    entry = &stack.entries[depth];
    entry->return_address = *return_slot;
    entry->return_slot = return_slot;
    entry->slot = slot;
    t_state.hook_depth = 1;
    stack.depth = depth + 1;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  stack.busy = false;
  if (entry == nullptr) CountNestedHook();
  if (entry != nullptr) {
    // A call left open by a longjmp keeps the mark, older than this call:
    // the reader's settled time (recorder.h) then waits, never runs ahead.
    entry->marked_open = NoteCallOpen(ThreadBuffer::kOpenTrampoline);
    MaybeSampleNativeStack(NowTicks());  // Before the interval starts: not counted in it.
    entry->begin_ticks = NowTicks();     // Last: as close to the real call as we get.
  }
  return entry;
}

// Called by the common exit with the result registers saved.
extern "C" __attribute__((visibility("hidden"))) void rlscope_trampoline_leave(ShadowEntry* entry) {
  rlscope::preload::EndCall(entry, rlscope::preload::NowTicks());
}

// Personality of the exit's FDE: the unwinder calls it for a hooked frame
// that an exception or forced unwind passes through. In the cleanup phase
// the call is over: record it and pop its entry, then let the unwind go on
// (the caller's return address and %r12 are read from the entry, which
// stays intact until this thread's next hooked call).
extern "C" __attribute__((visibility("hidden"))) _Unwind_Reason_Code rlscope_trampoline_personality(
    int version, _Unwind_Action actions, uint64_t, _Unwind_Exception*, _Unwind_Context* context) {
  using namespace rlscope::preload;
  if (version != 1) return _URC_FATAL_PHASE1_ERROR;
  if ((actions & _UA_CLEANUP_PHASE) == 0) return _URC_CONTINUE_UNWIND;
  // Only a frame stopped in the real call (its return address is the exit)
  // owns an entry; the exit code itself cannot throw.
  if (_Unwind_GetIP(context) != reinterpret_cast<uintptr_t>(rlscope_trampoline_exit)) return _URC_CONTINUE_UNWIND;
  auto* entry = reinterpret_cast<ShadowEntry*>(_Unwind_GetGR(context, 12));  // DWARF 12 = %r12.
  ShadowStack& stack = t_shadow;
  if (entry >= stack.entries && entry < stack.entries + stack.depth) EndCall(entry, NowTicks());
  return _URC_CONTINUE_UNWIND;
}
