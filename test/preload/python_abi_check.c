/* python_abi_check: compiles preload/python_abi.h's layouts against one
   CPython's own headers (public and internal) and says where they differ.
   Built once per interpreter test/CMakeLists.txt finds with its headers;
   exit 0 when every layout the hook reads matches, 1 (with the list) when
   not. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>

#if PY_VERSION_HEX >= 0x030E0000
#include "internal/pycore_frame.h"
#include "internal/pycore_interpframe_structs.h" /* 3.14 moved the frame's struct here. */
#elif PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#else
#include <frameobject.h> /* 3.10: PyFrameObject is public. */
#endif
#include "preload/python_abi.h"

static int failures = 0;

static void Check(const char* what, long expected_by_rlscope, long actual) {
  if (expected_by_rlscope != actual) {
    printf("MISMATCH %s: rlscope reads %ld, this Python has %ld\n", what, expected_by_rlscope, actual);
    ++failures;
  } else {
    printf("ok %s = %ld\n", what, actual);
  }
}

int main(void) {
  printf("CPython %s\n", PY_VERSION);
  Check("PyCFunctionObject.m_ml", RLSCOPE_PY_CFUNCTION_METHOD_DEF_OFFSET, (long)offsetof(PyCFunctionObject, m_ml));
  Check("PyMethodDescrObject.d_method", RLSCOPE_PY_METHOD_DESCR_METHOD_DEF_OFFSET,
        (long)offsetof(PyMethodDescrObject, d_method));
  Check("PyMethodDef.ml_meth", RLSCOPE_PY_METHOD_DEF_FUNCTION_OFFSET, (long)offsetof(PyMethodDef, ml_meth));
#if PY_VERSION_HEX >= 0x030B0000
  Check("PyFrameObject.f_frame", RLSCOPE_PY_FRAME_INTERPRETER_FRAME_OFFSET, (long)offsetof(PyFrameObject, f_frame));
#else
  Check("PyFrameObject.f_lasti (3.10)", RLSCOPE_PY310_FRAME_LASTI_OFFSET, (long)offsetof(PyFrameObject, f_lasti));
  Check("sizeof PyFrameObject.f_lasti (3.10)", (long)sizeof(int), (long)sizeof(((PyFrameObject*)0)->f_lasti));
#endif
  Check("PyTypeObject.tp_vectorcall_offset", RLSCOPE_PY_TYPE_VECTORCALL_OFFSET,
        (long)offsetof(PyTypeObject, tp_vectorcall_offset));
  Check("Py_TPFLAGS_HAVE_VECTORCALL", RLSCOPE_PY_TPFLAGS_HAVE_VECTORCALL, (long)Py_TPFLAGS_HAVE_VECTORCALL);
  Check("Py_tp_call", RLSCOPE_PY_TP_CALL_SLOT, (long)Py_tp_call);
  Check("METH_FASTCALL", RLSCOPE_PY_METH_FASTCALL, (long)METH_FASTCALL);
#if PY_VERSION_HEX >= 0x030C0000
  Check("PyTypeObject.tp_basicsize", RLSCOPE_PY_TYPE_BASICSIZE_OFFSET, (long)offsetof(PyTypeObject, tp_basicsize));
  /* That the code type's basic size is where co_code_adaptive starts (so
     in Objects/codeobject.c) needs the interpreter linked in: the hook
     checks it at run time, with the frames' offsets. */
  Check("PyVarObject.ob_size", 2 * (long)sizeof(void*), (long)offsetof(PyVarObject, ob_size));
  Check("_PyInterpreterFrame.previous", RLSCOPE_PY_INTERPRETER_FRAME_PREVIOUS_OFFSET,
        (long)offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX >= 0x030D0000
  Check("_PyInterpreterFrame.instr_ptr", RLSCOPE_PY_INTERPRETER_FRAME_INSTRUCTION_OFFSET,
        (long)offsetof(_PyInterpreterFrame, instr_ptr));
#else
  Check("_PyInterpreterFrame.prev_instr", RLSCOPE_PY_INTERPRETER_FRAME_INSTRUCTION_OFFSET,
        (long)offsetof(_PyInterpreterFrame, prev_instr));
#endif
  /* The running frame's code is the interpreter frame's first word. */
#if PY_VERSION_HEX >= 0x030D0000
  Check("_PyInterpreterFrame.f_executable", 0, (long)offsetof(_PyInterpreterFrame, f_executable));
  {
    const long offset = (long)offsetof(PyThreadState, current_frame);
    const int found = offset >= RLSCOPE_PY_THREAD_FRAME_SCAN_BEGIN && offset < RLSCOPE_PY_THREAD_FRAME_SCAN_END &&
                      offset % (long)sizeof(void*) == 0;
    Check("PyThreadState.current_frame within the scanned offsets", 1, found);
  }
#else
  Check("_PyInterpreterFrame.f_code", 0, (long)offsetof(_PyInterpreterFrame, f_code));
  Check("PyThreadState.cframe", RLSCOPE_PY312_THREAD_CFRAME_OFFSET, (long)offsetof(PyThreadState, cframe));
  Check("_PyCFrame.current_frame", 0, (long)offsetof(_PyCFrame, current_frame));
#endif
#endif
  return failures == 0 ? 0 : 1;
}
