// The CPython ABI layer of the Python hook (python_hook.cc): the opaque
// types, the C API resolved with dlsym when Python attaches (no link to
// libpython), and the object layouts read directly where a call through
// the API on every event would cost more than the event (python_abi.h
// holds their offsets, checked against each interpreter's headers by
// test/preload/python_abi_check.c). Everything here is about reading the
// interpreter; what the hook makes of it is python_hook.cc's. Shared by
// both backends: the profile function (3.10, 3.11) and sys.monitoring
// (3.12+). Unit-tested through a fake ABI (test/preload/python_api_test.cc).
#ifndef RLSCOPE_PRELOAD_PYTHON_API_H_
#define RLSCOPE_PRELOAD_PYTHON_API_H_

#include <cstddef>
#include <cstdint>

#include "preload/code_range.h"
#include "preload/python_abi.h"

namespace rlscope::preload::python {

// Opaque CPython types: only pointers to them are handled.
struct PyObject;
struct PyFrameObject;
struct PyThreadState;
struct PyInterpreterState;
using Py_ssize_t = intptr_t;
using ProfileFunction = int (*)(PyObject*, PyFrameObject*, int, PyObject*);
// What tells a running frame from every other while it runs: its
// PyFrameObject* under the profile function, its _PyInterpreterFrame*
// under sys.monitoring (which passes no frame; see python_hook.cc).
using FrameKey = const void*;

// PyTrace_* event codes (stable across CPython 3.x).
constexpr int kTraceCall = 0;
constexpr int kTraceReturn = 3;
constexpr int kTraceCCall = 4;
constexpr int kTraceCException = 5;
constexpr int kTraceCReturn = 6;
// Py_TPFLAGS_TYPE_SUBCLASS: set in the flags of a class object's type.
constexpr unsigned long kTypeSubclassFlag = 1UL << 31;

// The CPython API we use, resolved once with dlsym(RTLD_DEFAULT).
struct PythonApi {
  void (*set_profile)(ProfileFunction, PyObject*) = nullptr;
  void (*set_profile_all_threads)(ProfileFunction, PyObject*) = nullptr;         // 3.12+
  int (*set_profile_for)(PyThreadState*, ProfileFunction, PyObject*) = nullptr;  // 3.11: _PyEval_SetProfile
  PyInterpreterState* (*interpreter_get)() = nullptr;
  PyThreadState* (*thread_head)(PyInterpreterState*) = nullptr;
  PyThreadState* (*thread_next)(PyThreadState*) = nullptr;
  PyObject* (*frame_get_code)(PyFrameObject*) = nullptr;
  int (*frame_get_line_number)(PyFrameObject*) = nullptr;
  int (*frame_get_lasti)(PyFrameObject*) = nullptr;            // 3.11+; 3.10: LastiOf reads the frame.
  PyFrameObject* (*frame_get_back)(PyFrameObject*) = nullptr;  // Optional: see OnCurrentStack.
  Py_ssize_t (*request_extra_index)(void (*)(void*)) = nullptr;
  int (*get_extra)(PyObject*, Py_ssize_t, void**) = nullptr;
  int (*set_extra)(PyObject*, Py_ssize_t, void*) = nullptr;
  Py_ssize_t extra_index = -1;
  int (*add_audit_hook)(int (*)(const char*, PyObject*, void*), void*) = nullptr;
  PyObject* (*get_attr_string)(PyObject*, const char*) = nullptr;
  const char* (*unicode_as_utf8)(PyObject*, Py_ssize_t*) = nullptr;
  long (*long_as_long)(PyObject*) = nullptr;
  void (*dec_ref)(PyObject*) = nullptr;
  void (*err_clear)() = nullptr;
  // Optional: class-hierarchy facts for `class=` rules (ClassFactsOf).
  PyObject* (*frame_get_globals)(PyFrameObject*) = nullptr;  // 3.11+
  PyObject* (*dict_get_item_string)(PyObject*, const char*) = nullptr;
  // Optional: 3.10's qualified names (QualnameOf in python_hook.cc).
  int (*dict_next)(PyObject*, Py_ssize_t*, PyObject**, PyObject**) = nullptr;  // PyDict_Next
  PyObject* (*mapping_get_item_string)(PyObject*, const char*) = nullptr;      // PyMapping_GetItemString
  Py_ssize_t (*tuple_size)(PyObject*) = nullptr;
  PyObject* (*tuple_get_item)(PyObject*, Py_ssize_t) = nullptr;
  unsigned long (*type_get_flags)(const void*) = nullptr;
  const void* cfunction_type = nullptr;
  const void* cmethod_type = nullptr;
  const void* method_descriptor_type = nullptr;
  // sys.monitoring (3.12+; python_monitoring section).
  PyThreadState* (*thread_state_get)() = nullptr;
  PyFrameObject* (*eval_get_frame)() = nullptr;  // Attach, and a layout the hook cannot read.
  PyObject* (*eval_get_globals)() = nullptr;
  int (*code_addr_to_line)(PyObject*, int) = nullptr;
  PyObject* (*cfunction_new)(void*, PyObject*, PyObject*) = nullptr;  // PyCFunction_NewEx
  PyObject* (*dict_new)() = nullptr;
  int (*dict_set_item_string)(PyObject*, const char*, PyObject*) = nullptr;
  PyObject* (*method_function)(PyObject*) = nullptr;
  void* (*type_get_slot)(const void*, int) = nullptr;
  PyObject* (*generic_get_dict)(PyObject*, void*) = nullptr;  // PyObject_GenericGetDict
  // Optional: a wrapped function's code and globals, borrowed, without the
  // attribute lookup (and its audit event) or a key string made per call.
  PyObject* (*function_get_code)(PyObject*) = nullptr;             // PyFunction_GetCode
  PyObject* (*function_get_globals)(PyObject*) = nullptr;          // PyFunction_GetGlobals
  PyObject* (*dict_get_item)(PyObject*, PyObject*) = nullptr;      // PyDict_GetItem: borrowed
  PyObject* (*unicode_intern_from_string)(const char*) = nullptr;  // PyUnicode_InternFromString
  const void* function_type = nullptr;
  const void* method_type = nullptr;
  PyObject* none = nullptr;
  PyObject* (*import_module)(const char*) = nullptr;         // Attach only: blocking calls.
  PyObject* (*call_object)(PyObject*, PyObject*) = nullptr;  // Attach only: blocking calls.
  void (*inc_ref)(PyObject*) = nullptr;                      // Py_IncRef
  int (*add_pending_call)(int (*)(void*), void*) = nullptr;  // Py_AddPendingCall: no GIL needed.
  // The interpreter's own code (the executable or libpython): calls into it
  // are Python time.
  CodeRange interpreter;
  int minor = 0;  // The interpreter's 3.MINOR (Py_GetVersion).
  bool ok = false;
};
extern PythonApi g_api;

// Object layouts shared by CPython 3.10 to 3.13 (checked at attach by
// the type objects, never assumed for other types):
//   PyCFunctionObject:    PyObject_HEAD (16 bytes), PyMethodDef* m_ml
//   PyMethodDescrObject:  PyObject_HEAD, d_type, d_name, d_qualname,
//                         PyMethodDef* d_method (offset 40)
//   PyMethodDef:          const char* ml_name, void* ml_meth (offset 8)
constexpr size_t kCFunctionMethodDefOffset = RLSCOPE_PY_CFUNCTION_METHOD_DEF_OFFSET;
constexpr size_t kMethodDescrMethodDefOffset = RLSCOPE_PY_METHOD_DESCR_METHOD_DEF_OFFSET;
constexpr size_t kMethodDefFunctionOffset = RLSCOPE_PY_METHOD_DEF_FUNCTION_OFFSET;

inline const void* TypeOf(PyObject* object) {
  return *reinterpret_cast<void* const*>(reinterpret_cast<const char*>(object) + sizeof(Py_ssize_t));
}

inline uintptr_t LoadPointer(const void* base, size_t offset) {
  return *reinterpret_cast<const uintptr_t*>(reinterpret_cast<const char*>(base) + offset);
}

// MethodDefOf: the PyMethodDef of a builtin function or method descriptor
// `callable` of type `type` (it decides the C function called), or 0 for
// any other callable.
inline uintptr_t MethodDefOf(PyObject* callable, const void* type) {
  if (type == g_api.cfunction_type || type == g_api.cmethod_type) {
    return LoadPointer(callable, kCFunctionMethodDefOffset);
  }
  if (type == g_api.method_descriptor_type) return LoadPointer(callable, kMethodDescrMethodDefOffset);
  return 0;
}

// NativeFunctionOf: the C function a C_CALL calls, or 0 if unknown.
inline uintptr_t NativeFunctionOf(PyObject* callable) {
  if (callable == nullptr) return 0;
  const uintptr_t method_def = MethodDefOf(callable, TypeOf(callable));
  return method_def != 0 ? LoadPointer(reinterpret_cast<const void*>(method_def), kMethodDefFunctionOffset) : 0;
}

inline bool InsideInterpreter(uintptr_t address) { return g_api.interpreter.Contains(address); }

// LastiOf: where `frame` is in its code, a key for the line it runs
// (CachedLine): bytes on 3.11+ (PyFrame_GetLasti), code units on 3.10,
// whose frame object holds it (checked against 3.10's headers by
// preload.python_abi.3.10). Never mixed: one interpreter per process.
constexpr size_t kFrameLastiOffset310 = RLSCOPE_PY310_FRAME_LASTI_OFFSET;
inline int LastiOf(PyFrameObject* frame) {
  if (__builtin_expect(g_api.frame_get_lasti != nullptr, 1)) return g_api.frame_get_lasti(frame);
  return *reinterpret_cast<const int*>(reinterpret_cast<const char*>(frame) + kFrameLastiOffset310);
}

// Reading a frame's code object. PyFrame_GetCode costs a call and a
// reference count round trip on every Python call, so the hook reads the
// pointer directly once it has verified where it lives: PyFrameObject keeps
// its _PyInterpreterFrame* at offset 24 (3.11, 3.12), which keeps the code
// at offset 32 (3.11: f_code) or 0 (3.12: f_code, 3.13: f_executable).
// The first kLayoutChecks calls compare each candidate with the API's answer;
// a candidate that is right every time is used from then on, and if none is
// (another layout), the API stays in use.
constexpr size_t kFrameInterpreterFrameOffset = RLSCOPE_PY_FRAME_INTERPRETER_FRAME_OFFSET;
constexpr size_t kCodeOffsetCandidates[] = {32, 0};
constexpr int kLayoutChecks = 256;
extern int g_layout_checks;
extern bool g_candidate_ok[2];
extern int g_code_offset;  // Verified offset, or -1 (use the API).

inline PyObject* DirectCode(PyFrameObject* frame, size_t offset) {
  const uintptr_t interpreter_frame = LoadPointer(frame, kFrameInterpreterFrameOffset);
  return interpreter_frame != 0
             ? reinterpret_cast<PyObject*>(LoadPointer(reinterpret_cast<const void*>(interpreter_frame), offset))
             : nullptr;
}

// CodeOf: the frame's code object, a borrowed reference (valid while the
// frame runs, which covers the hook's use of it).
inline PyObject* CodeOf(PyFrameObject* frame) {
  if (__builtin_expect(g_code_offset >= 0, 1)) return DirectCode(frame, static_cast<size_t>(g_code_offset));
  PyObject* code = g_api.frame_get_code(frame);  // New reference: give it back.
  g_api.dec_ref(code);
  if (g_layout_checks < kLayoutChecks) {
    for (int i = 0; i < 2; ++i) {
      if (DirectCode(frame, kCodeOffsetCandidates[i]) != code) g_candidate_ok[i] = false;
    }
    if (++g_layout_checks == kLayoutChecks) {
      for (int i = 0; i < 2; ++i) {
        if (g_candidate_ok[i]) {
          g_code_offset = static_cast<int>(kCodeOffsetCandidates[i]);
          break;
        }
      }
    }
  }
  return code;
}

// Where the running frame is: 3.12 keeps it in tstate->cframe->current_frame,
// 3.13 in tstate->current_frame. Found at attach (DiscoverFrameLayout) by
// where the attaching frame is; checked on the first kFrameChecks starts.
struct FrameLayout {
  int tstate_offset = -1;
  bool through_cframe = false;  // 3.12: a _PyCFrame* whose first word is the frame.
};
extern FrameLayout g_frame_layout;
constexpr int kFrameChecks = 256;
extern int g_frame_checks;
// After a failed check: frame objects (PyEval_GetFrame) tell frames apart
// instead, slower (each frame then gets one) but layout-free.
extern bool g_frame_objects;

// Layouts 3.12 and 3.13 share (python_abi.h).
constexpr size_t kTypeVectorcallOffset = RLSCOPE_PY_TYPE_VECTORCALL_OFFSET;
constexpr unsigned long kTypeHasVectorcall = RLSCOPE_PY_TPFLAGS_HAVE_VECTORCALL;
constexpr int kSlotTpCall = RLSCOPE_PY_TP_CALL_SLOT;
constexpr size_t kThreadCframeOffset312 = RLSCOPE_PY312_THREAD_CFRAME_OFFSET;

inline FrameKey FrameKeyNow() {
  if (__builtin_expect(!g_frame_objects, 1)) {
    const void* tstate = g_api.thread_state_get();
    uintptr_t word = LoadPointer(tstate, static_cast<size_t>(g_frame_layout.tstate_offset));
    if (g_frame_layout.through_cframe && word != 0) word = LoadPointer(reinterpret_cast<const void*>(word), 0);
    return reinterpret_cast<FrameKey>(word);
  }
  return g_api.eval_get_frame();  // Borrowed; lives as long as its frame.
}

inline int OffsetOf(PyObject* offset) { return static_cast<int>(g_api.long_as_long(offset)); }

// Reading where an outer interpreter frame is (3.12+, frames keyed by
// interpreter frame): the instruction it runs stays on its call while the
// callee runs, so its line is exact however many of its call sites
// sys.monitoring no longer reports.
constexpr size_t kTypeBasicsizeOffset = RLSCOPE_PY_TYPE_BASICSIZE_OFFSET;
constexpr size_t kInterpreterFramePreviousOffset = RLSCOPE_PY_INTERPRETER_FRAME_PREVIOUS_OFFSET;
constexpr size_t kInterpreterFrameInstructionOffset = RLSCOPE_PY_INTERPRETER_FRAME_INSTRUCTION_OFFSET;

// RunningOffset: the byte offset of the instruction interpreter frame
// `frame` of `code` runs now (sys.monitoring's offsets), or -1 if it is
// not within the code.
inline int RunningOffset(FrameKey frame, PyObject* code) {
  const auto* type = static_cast<const void*>(TypeOf(code));
  const uintptr_t first = reinterpret_cast<uintptr_t>(code) + LoadPointer(type, kTypeBasicsizeOffset);
  const auto code_units = static_cast<uintptr_t>(LoadPointer(code, sizeof(Py_ssize_t) * 2));  // ob_size.
  const uintptr_t instruction = LoadPointer(frame, kInterpreterFrameInstructionOffset);
  if (instruction < first || instruction - first >= code_units * 2) return -1;
  return static_cast<int>(instruction - first);
}

// CallerFrame: the interpreter frame that called `frame` (0 at the bottom).
inline FrameKey CallerFrame(FrameKey frame) {
  return reinterpret_cast<FrameKey>(LoadPointer(frame, kInterpreterFramePreviousOffset));
}

inline PyObject* RunningGlobals() { return g_api.eval_get_globals(); }  // Borrowed.

// CallableFunction: the C code a call of `callable` runs, or 0 with
// *python set for a Python function (its PY_START follows). For other
// objects, what their type runs for a call: the vectorcall function the
// object carries, else tp_call (numpy's ufuncs and jaxlib's jitted
// functions have their own; instances of Python classes run the
// interpreter's slot_tp_call, which is inside it: not a transition).
uintptr_t CallableFunction(PyObject* callable, bool* python);

// PyMethodDef, as CPython lays it out.
struct MethodDef {
  const char* name;
  PyObject* (*function)(PyObject*, PyObject* const*, Py_ssize_t);
  int flags;
  const char* doc;
};
constexpr int kMethFastcall = RLSCOPE_PY_METH_FASTCALL;
// DiscoverFrameLayout: where the thread state keeps the running frame,
// told by the attaching frame (sitecustomize's, which makes the ctypes call).
bool DiscoverFrameLayout(int minor);

// ResolvePythonApi: fills `api` from the running interpreter's symbols
// (dlsym(RTLD_DEFAULT)); `api.ok` says whether all the hook needs is there.
// Attach only, with the GIL held.
void ResolvePythonApi(PythonApi& api);

}  // namespace rlscope::preload::python

#endif  // RLSCOPE_PRELOAD_PYTHON_API_H_
