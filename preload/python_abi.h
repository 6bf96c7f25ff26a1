/* The CPython object layouts the Python hook (python_hook.cc) reads
   directly, where a call through the C API on every event would cost more
   than the event. Shared by CPython 3.10 to 3.13 unless marked (the hook checks at run
   time what it can, and test/preload/python_abi_check.c compiles these
   against each interpreter's own headers). C and C++ alike: the check is
   C, since CPython's internal headers are. */
#ifndef RLSCOPE_PRELOAD_PYTHON_ABI_H_
#define RLSCOPE_PRELOAD_PYTHON_ABI_H_

enum {
  RLSCOPE_PY_CFUNCTION_METHOD_DEF_OFFSET = 16,    /* PyCFunctionObject.m_ml */
  RLSCOPE_PY_METHOD_DESCR_METHOD_DEF_OFFSET = 40, /* PyMethodDescrObject.d_method */
  RLSCOPE_PY_METHOD_DEF_FUNCTION_OFFSET = 8,      /* PyMethodDef.ml_meth */
  RLSCOPE_PY_FRAME_INTERPRETER_FRAME_OFFSET = 24, /* PyFrameObject.f_frame (3.11+) */
  RLSCOPE_PY_TYPE_VECTORCALL_OFFSET = 56,         /* PyTypeObject.tp_vectorcall_offset */
  RLSCOPE_PY_TPFLAGS_HAVE_VECTORCALL = 1 << 11,   /* Py_TPFLAGS_HAVE_VECTORCALL */
  RLSCOPE_PY_TP_CALL_SLOT = 50,                   /* Py_tp_call, for PyType_GetSlot */
  RLSCOPE_PY_METH_FASTCALL = 0x0080,              /* METH_FASTCALL */
  RLSCOPE_PY_TYPE_BASICSIZE_OFFSET = 32,          /* PyTypeObject.tp_basicsize */
  /* An interpreter frame (3.12+): its caller's frame, and the instruction
     it runs now (3.12 prev_instr, 3.13 and 3.14 instr_ptr), which stays on
     a call while the callee runs. A code object's instructions start at the
     code type's basic size (co_code_adaptive, its variable part). */
  RLSCOPE_PY_INTERPRETER_FRAME_PREVIOUS_OFFSET = 8,
  RLSCOPE_PY_INTERPRETER_FRAME_INSTRUCTION_OFFSET = 56,
  /* Where a thread state keeps its running frame: 3.12 in
     tstate->cframe->current_frame, 3.13 in tstate->current_frame, which the
     hook finds at attach between these offsets. */
  RLSCOPE_PY312_THREAD_CFRAME_OFFSET = 56, /* PyThreadState.cframe */
  /* CPython 3.10 has no PyFrame_GetLasti: the frame object itself holds
     the index of its last instruction, in code units (int f_lasti). */
  RLSCOPE_PY310_FRAME_LASTI_OFFSET = 96, /* PyFrameObject.f_lasti (3.10) */
  RLSCOPE_PY_THREAD_FRAME_SCAN_BEGIN = 24,
  RLSCOPE_PY_THREAD_FRAME_SCAN_END = 256
};

#endif /* RLSCOPE_PRELOAD_PYTHON_ABI_H_ */
