// Trampoline stubs and their common entry/exit (see trampoline.h for the
// design, trampoline.cc for the C++ halves and the limitations).
//
// Stack alignment (SysV): at a stub, %rsp = R with R = 8 (mod 16).
//   entry frame:  R - 200 = 0 (mod 16): xmm saves are movaps-aligned and the
//                 call to rlscope_trampoline_enter is aligned.
//   real call:    %rsp = R + 8 (the caller's return address is dropped), so
//                 `call` writes our exit address into the very slot R: the
//                 real function sees the caller's stack layout unchanged.
//   exit frame:   R + 8 - 64 = 0 (mod 16) for the call to ..._leave.
// CFI: the exit's CFA is R + 16, not the true R + 8 (see the exit's FDE).
// Nothing here touches the x87 stack (a long double result lives in st(0)).
#include "preload/trampoline.h"
// With -fcf-protection (__CET__), <cet.h> marks the object IBT/SHSTK
// compatible, which it is: every indirect-branch target starts with
// endbr64 and call/ret stay paired.
#ifdef __CET__
#include <cet.h>
#endif

  .text

// ---------------------------------------------------------------------------
// The stub table: stub i loads &rlscope_trampoline_slots[i] into %r11.
// Exactly RLSCOPE_TRAMPOLINE_STUB_BYTES each ({disp32} keeps every jmp the
// same size), so stub i is at rlscope_trampoline_stubs + 16 * i.
// endbr64: reached by indirect jumps from PLTs and function pointers.
// ---------------------------------------------------------------------------
.macro RLSCOPE_STUB index
  .balign RLSCOPE_TRAMPOLINE_STUB_BYTES, 0xcc
  endbr64
  lea rlscope_trampoline_slots + (\index) * RLSCOPE_TRAMPOLINE_SLOT_BYTES(%rip), %r11
  {disp32} jmp rlscope_trampoline_common
.endm

  .balign 64
  .globl rlscope_trampoline_stubs
  .hidden rlscope_trampoline_stubs
  .type rlscope_trampoline_stubs, @function
rlscope_trampoline_stubs:
  .cfi_startproc
.irp high, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
.irp low, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
  RLSCOPE_STUB (\high * 16 + \low)
.endr
.endr
  .cfi_endproc
  .globl rlscope_trampoline_stubs_end
  .hidden rlscope_trampoline_stubs_end
rlscope_trampoline_stubs_end:
  .size rlscope_trampoline_stubs, rlscope_trampoline_stubs_end - rlscope_trampoline_stubs

// ---------------------------------------------------------------------------
// Common entry. %r11 = TrampolineSlot*, [%rsp] = the caller's return address.
// Frame: 0..127 xmm0-7, 128 rdi, 136 rsi, 144 rdx, 152 rcx, 160 r8, 168 r9,
//        176 rax (vector-register count of a variadic call), 184 r10 (static
//        chain, kept for completeness), 192 r11 (the slot).
// ---------------------------------------------------------------------------
#define FRAME 200

.macro RESTORE_ARGUMENTS
  movaps 0(%rsp), %xmm0
  movaps 16(%rsp), %xmm1
  movaps 32(%rsp), %xmm2
  movaps 48(%rsp), %xmm3
  movaps 64(%rsp), %xmm4
  movaps 80(%rsp), %xmm5
  movaps 96(%rsp), %xmm6
  movaps 112(%rsp), %xmm7
  mov 128(%rsp), %rdi
  mov 136(%rsp), %rsi
  mov 144(%rsp), %rdx
  mov 152(%rsp), %rcx
  mov 160(%rsp), %r8
  mov 168(%rsp), %r9
  mov 176(%rsp), %rax
  mov 184(%rsp), %r10
.endm

  .p2align 4
  .globl rlscope_trampoline_common
  .hidden rlscope_trampoline_common
  .type rlscope_trampoline_common, @function
rlscope_trampoline_common:
  .cfi_startproc
  sub $FRAME, %rsp
  .cfi_adjust_cfa_offset FRAME
  movaps %xmm0, 0(%rsp)
  movaps %xmm1, 16(%rsp)
  movaps %xmm2, 32(%rsp)
  movaps %xmm3, 48(%rsp)
  movaps %xmm4, 64(%rsp)
  movaps %xmm5, 80(%rsp)
  movaps %xmm6, 96(%rsp)
  movaps %xmm7, 112(%rsp)
  mov %rdi, 128(%rsp)
  mov %rsi, 136(%rsp)
  mov %rdx, 144(%rsp)
  mov %rcx, 152(%rsp)
  mov %r8, 160(%rsp)
  mov %r9, 168(%rsp)
  mov %rax, 176(%rsp)
  mov %r10, 184(%rsp)
  mov %r11, 192(%rsp)
  mov %r11, %rdi                 // slot
  lea FRAME(%rsp), %rsi          // where the caller's return address is
  call rlscope_trampoline_enter  // -> ShadowEntry*, or null: pass through
  mov 192(%rsp), %r11
  mov RLSCOPE_SLOT_TARGET_OFFSET(%r11), %r11
  test %rax, %rax
  jnz .Lrecord
  RESTORE_ARGUMENTS
  add $FRAME, %rsp
  .cfi_remember_state
  .cfi_adjust_cfa_offset -FRAME
  jmp *%r11                      // untouched stack: the real function returns to the caller
.Lrecord:
  .cfi_restore_state
  mov %r12, RLSCOPE_SHADOW_SAVED_R12_OFFSET(%rax)
  mov %rax, %r12
  // From here the caller's %r12 lives in the entry: DW_CFA_expression(r12, [r12 + 8]).
  .cfi_escape 0x10, 0x0c, 0x02, 0x7c, RLSCOPE_SHADOW_SAVED_R12_OFFSET
  RESTORE_ARGUMENTS
  add $(FRAME + 8), %rsp         // frame and return address (kept in the entry) gone
  .cfi_endproc
  .size rlscope_trampoline_common, . - rlscope_trampoline_common

// ---------------------------------------------------------------------------
// The call into the real function and the common exit, as their own FDE:
// while the real function runs, the unwinder must find the caller's return
// address and %r12 in the shadow entry (%r12 points at it), and our
// personality routine must see the frame to pop the entry when an exception
// or a forced unwind (pthread_cancel/exit) passes through.
// ---------------------------------------------------------------------------
  .globl rlscope_trampoline_call
  .hidden rlscope_trampoline_call
  .type rlscope_trampoline_call, @function
rlscope_trampoline_call:
  .cfi_startproc
  .cfi_personality 0x1b, rlscope_trampoline_personality  // pcrel|sdata4, hidden symbol
  // This frame owns no stack: the caller's %rsp after the return is ours.
  // A CFA equal to our %rsp would give this frame and the caller's the
  // same identity (libgcc tells frames apart by CFA, and would take ours
  // for the handler's frame), so the CFA is set 8 bytes higher and the
  // caller's %rsp is stated explicitly: DW_CFA_val_offset(rsp, CFA - 8).
  .cfi_def_cfa %rsp, 8
  .cfi_val_offset %rsp, -8
  // DW_CFA_expression(ra = column 16, [r12 + 0]); DW_CFA_expression(r12, [r12 + 8]).
  .cfi_escape 0x10, 0x10, 0x02, 0x7c, RLSCOPE_SHADOW_RETURN_ADDRESS_OFFSET
  .cfi_escape 0x10, 0x0c, 0x02, 0x7c, RLSCOPE_SHADOW_SAVED_R12_OFFSET
  call *%r11
  .globl rlscope_trampoline_exit
  .hidden rlscope_trampoline_exit
rlscope_trampoline_exit:
  // The real function returned: rax/rdx/xmm0/xmm1 may hold its result
  // (st(0) too, untouched).
  sub $64, %rsp
  .cfi_adjust_cfa_offset 64
  mov %rax, 0(%rsp)
  mov %rdx, 8(%rsp)
  movaps %xmm0, 16(%rsp)
  movaps %xmm1, 32(%rsp)
  // Copy the return address and the caller's %r12 out of the entry before
  // it is popped: a signal handler may reuse the entry right after.
  mov RLSCOPE_SHADOW_RETURN_ADDRESS_OFFSET(%r12), %r11
  mov %r11, 48(%rsp)
  .cfi_offset %rip, -24          // CFA = %rsp + 72 now
  mov RLSCOPE_SHADOW_SAVED_R12_OFFSET(%r12), %r11
  mov %r11, 56(%rsp)
  .cfi_offset %r12, -16
  mov %r12, %rdi
  call rlscope_trampoline_leave
  mov 0(%rsp), %rax
  mov 8(%rsp), %rdx
  movaps 16(%rsp), %xmm0
  movaps 32(%rsp), %xmm1
  mov 56(%rsp), %r12
  .cfi_restore %r12
  mov 48(%rsp), %r11
  mov %r11, 56(%rsp)
  .cfi_offset %rip, -16
  add $56, %rsp
  // An ordinary frame again: the return address at %rsp, CFA = %rsp + 8.
  // (Explicit rsp = CFA: the assembler may have put the rule above in the
  // CIE, where .cfi_restore would bring it back.)
  .cfi_def_cfa_offset 8
  .cfi_val_offset %rsp, 0
  .cfi_offset %rip, -8
  ret                            // matches the caller's call: predicted, CET-clean
  .cfi_endproc
  .size rlscope_trampoline_call, . - rlscope_trampoline_call

  .section .note.GNU-stack, "", @progbits
