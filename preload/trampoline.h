// Trampolines: interception of an arbitrary x86-64 C function whose
// signature is unknown (simulator entry points such as mj_step or
// b2World::Step), recording each outermost call as a kSimulatorCall interval.
//
// Each hooked function gets one 16-byte stub from a static table
// (trampoline_x86_64.S). The stub loads its TrampolineSlot into %r11 and
// jumps to a common entry that saves every argument register (rdi, rsi, rdx,
// rcx, r8, r9, r10, rax, xmm0-7), asks rlscope_trampoline_enter whether to
// record, restores them and continues into the real function:
//
//   not recording, nested, shadow stack full:  jmp *target   (return address untouched)
//   recording:  pop the caller's return address (kept in a per-thread shadow
//               entry), `call *target`: the real function sees exactly the
//               stack it would have seen (stack arguments at the same offsets)
//               and returns into the common exit, which records the interval
//               and returns to the caller with `ret`.
//
// Because the exit is reached by a real call/ret pair, return prediction and
// CET shadow stacks stay balanced. %r12 (callee-saved, so the real function
// preserves it) holds the shadow entry across the call; the caller's %r12 is
// parked in the entry. That makes the frame describable in DWARF CFI, so C++
// exceptions and backtraces unwind through a hooked call (see LIMITATIONS in
// trampoline.cc for what is and is not covered).
//
// The constants below are shared with the assembly (it includes this header).
#ifndef RLSCOPE_PRELOAD_TRAMPOLINE_H_
#define RLSCOPE_PRELOAD_TRAMPOLINE_H_

// Number of stubs, hence of distinct functions that can be hooked.
#define RLSCOPE_TRAMPOLINE_CAPACITY 256
#define RLSCOPE_TRAMPOLINE_STUB_BYTES 16
#define RLSCOPE_TRAMPOLINE_SLOT_BYTES 16
// Offsets the assembly uses: TrampolineSlot::target and the first two
// fields of ShadowEntry.
#define RLSCOPE_SLOT_TARGET_OFFSET 0
#define RLSCOPE_SHADOW_RETURN_ADDRESS_OFFSET 0
#define RLSCOPE_SHADOW_SAVED_R12_OFFSET 8

#ifndef __ASSEMBLER__

#include <cstddef>
#include <cstdint>

#include "format/wire_format.h"

namespace rlscope::preload {

// TrampolineSlot: what one stub forwards to. Written once, before the stub's
// address is handed out; read by every call through the stub.
struct TrampolineSlot {
  void* target;         // The real function.
  uint32_t name_id;     // Interned symbol name (StringTable).
  uint32_t event_kind;  // The wire::EventKind it records: kSimulatorCall, kBackendCall, kCommunicationCall.
};
static_assert(sizeof(TrampolineSlot) == RLSCOPE_TRAMPOLINE_SLOT_BYTES, "stubs index slots by this size");
static_assert(offsetof(TrampolineSlot, target) == RLSCOPE_SLOT_TARGET_OFFSET, "the assembly reads target here");

// ShadowEntry: one hooked call in progress on this thread.
struct ShadowEntry {
  void* return_address;  // The caller's; the exit returns there.
  uintptr_t saved_r12;   // The caller's %r12 (ours holds &entry).
  void** return_slot;    // Where the return address was: identifies the frame.
  const TrampolineSlot* slot;
  uint64_t begin_ticks;
  // Whether this call marked the thread's trampoline calls open (recorder.h
  // NoteCallOpen): only that call clears the mark, after its record.
  bool marked_open;
};
static_assert(offsetof(ShadowEntry, return_address) == RLSCOPE_SHADOW_RETURN_ADDRESS_OFFSET, "asm/CFI offset");
static_assert(offsetof(ShadowEntry, saved_r12) == RLSCOPE_SHADOW_SAVED_R12_OFFSET, "asm/CFI offset");

class Trampolines {
 public:
  static constexpr int kCapacity = RLSCOPE_TRAMPOLINE_CAPACITY;
  // Depth of the per-thread shadow stack. Only the outermost hooked call of
  // a thread uses an entry; the rest is room for entries of frames that were
  // unwound by longjmp and not yet noticed (see trampoline.cc).
  static constexpr int kShadowDepth = 128;

  // For: the stub that intercepts `target`, created on first use; the same
  // target always gets the same stub, whoever asks (GOT patcher, dlsym).
  // `name` is interned once, as the recorded event's name; `kind` is the
  // event a call records (a target keeps the kind it was first given).
  // Returns nullptr once all kCapacity stubs are taken (logged once):
  // callers then leave the function unhooked. Not for the hot path (takes a lock); needs the string
  // table (StringTable::Init) to exist.
  static void* For(void* target, const char* name, wire::EventKind kind = wire::EventKind::kSimulatorCall);
  // IsStub: whether `address` is one of the stubs (handed out or not).
  static bool IsStub(const void* address);
  // TargetOf: the real function behind a handed-out stub, else nullptr.
  static void* TargetOf(const void* address);
  // Count: stubs handed out so far.
  static int Count();
  // ShadowDepth: hooked calls in progress on the calling thread (tests).
  static int ShadowDepth();
};

}  // namespace rlscope::preload

#endif  // __ASSEMBLER__
#endif  // RLSCOPE_PRELOAD_TRAMPOLINE_H_
