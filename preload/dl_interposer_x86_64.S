// The preload's exported dlopen, dlsym and dlvsym (see dl_interposer.h).
// Each saves its arguments, asks its route function (C++) for the function
// to continue in, restores the arguments and *jumps* there: the real
// function (or our wrapper) runs with the original caller's return address
// on the stack, which glibc uses to find the caller. No version node in
// preload.map: an unversioned definition binds dlsym@GLIBC_2.34 and
// dlsym@GLIBC_2.2.5 references alike.
//
// Stack: at entry %rsp = 8 (mod 16); after saving (2 or 3 pushes, plus 8
// bytes for the 2-argument case) it is 0 (mod 16) for the call, and the
// caller's return address sits just above the saved registers.

#ifdef __CET__
#include <cet.h>  // IBT/SHSTK property note (see trampoline_x86_64.S).
#endif

// RLSCOPE_DL_ENTRY name, route, arguments (2 or 3): the argument after the
// last one receives the caller's return address.
.macro RLSCOPE_DL_ENTRY name, route, arguments
  .text
  .p2align 4
  .globl \name
  .type \name, @function
\name:
  .cfi_startproc
  endbr64
  push %rdi
  .cfi_adjust_cfa_offset 8
  push %rsi
  .cfi_adjust_cfa_offset 8
.if \arguments == 2
  sub $8, %rsp
  .cfi_adjust_cfa_offset 8
  mov 24(%rsp), %rdx
.else
  push %rdx
  .cfi_adjust_cfa_offset 8
  mov 24(%rsp), %rcx
.endif
  call \route
.if \arguments == 2
  add $8, %rsp
  .cfi_adjust_cfa_offset -8
.else
  pop %rdx
  .cfi_adjust_cfa_offset -8
.endif
  pop %rsi
  .cfi_adjust_cfa_offset -8
  pop %rdi
  .cfi_adjust_cfa_offset -8
  jmp *%rax
  .cfi_endproc
  .size \name, . - \name
.endm

RLSCOPE_DL_ENTRY dlopen, rlscope_route_dlopen, 2
RLSCOPE_DL_ENTRY dlsym, rlscope_route_dlsym, 2
RLSCOPE_DL_ENTRY dlvsym, rlscope_route_dlvsym, 3

  .section .note.GNU-stack, "", @progbits
