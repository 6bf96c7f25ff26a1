#include "preload/python_api.h"

#include <dlfcn.h>

#include <cstdio>

namespace rlscope::preload::python {

PythonApi g_api;
int g_layout_checks = 0;
bool g_candidate_ok[2] = {true, true};
int g_code_offset = -1;
FrameLayout g_frame_layout;
int g_frame_checks = 0;
bool g_frame_objects = false;

uintptr_t CallableFunction(PyObject* callable, bool* python) {
  *python = false;
  if (callable == nullptr) return 0;
  const void* type = TypeOf(callable);
  if (type == g_api.cfunction_type || type == g_api.cmethod_type || type == g_api.method_descriptor_type) {
    return NativeFunctionOf(callable);
  }
  if (type == g_api.function_type) {
    *python = true;
    return 0;
  }
  if (type == g_api.method_type) {
    PyObject* function = g_api.method_function(callable);  // Borrowed.
    if (function != nullptr && TypeOf(function) == g_api.function_type) {
      *python = true;
      return 0;
    }
    if (function == nullptr) return 0;
    callable = function;
    type = TypeOf(callable);
    if (type == g_api.cfunction_type || type == g_api.cmethod_type || type == g_api.method_descriptor_type) {
      return NativeFunctionOf(callable);
    }
  }
  if ((g_api.type_get_flags(type) & kTypeHasVectorcall) != 0) {
    const auto offset = static_cast<Py_ssize_t>(LoadPointer(type, kTypeVectorcallOffset));
    if (offset > 0) {
      if (const uintptr_t vectorcall = LoadPointer(callable, static_cast<size_t>(offset)); vectorcall != 0) {
        return vectorcall;
      }
    }
  }
  return reinterpret_cast<uintptr_t>(g_api.type_get_slot(type, kSlotTpCall));
}

bool DiscoverFrameLayout(int minor) {
  if (g_api.eval_get_frame == nullptr || g_api.thread_state_get == nullptr) return false;
  PyFrameObject* frame = g_api.eval_get_frame();  // Borrowed.
  if (frame == nullptr) return false;
  const uintptr_t running = LoadPointer(frame, kFrameInterpreterFrameOffset);
  const void* tstate = g_api.thread_state_get();
  if (running == 0 || tstate == nullptr) return false;
  if (minor == 12) {
    const uintptr_t cframe = LoadPointer(tstate, kThreadCframeOffset312);
    if (cframe == 0 || LoadPointer(reinterpret_cast<const void*>(cframe), 0) != running) return false;
    g_frame_layout = {static_cast<int>(kThreadCframeOffset312), true};
    return true;
  }
  // 3.13+: a field of the thread state itself, past its list links.
  for (size_t offset = RLSCOPE_PY_THREAD_FRAME_SCAN_BEGIN; offset < RLSCOPE_PY_THREAD_FRAME_SCAN_END;
       offset += sizeof(void*)) {
    if (LoadPointer(tstate, offset) == running) {
      g_frame_layout = {static_cast<int>(offset), false};
      return true;
    }
  }
  return false;
}

namespace {

template <typename Function>
void Resolve(Function& function, const char* name) {
  function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void ResolvePythonApi(PythonApi& api) {
  Resolve(api.set_profile, "PyEval_SetProfile");
  Resolve(api.set_profile_all_threads, "PyEval_SetProfileAllThreads");
  Resolve(api.set_profile_for, "_PyEval_SetProfile");
  Resolve(api.interpreter_get, "PyInterpreterState_Get");
  Resolve(api.thread_head, "PyInterpreterState_ThreadHead");
  Resolve(api.thread_next, "PyThreadState_Next");
  Resolve(api.frame_get_code, "PyFrame_GetCode");
  Resolve(api.frame_get_line_number, "PyFrame_GetLineNumber");
  Resolve(api.frame_get_lasti, "PyFrame_GetLasti");
  Resolve(api.frame_get_back, "PyFrame_GetBack");
  // 3.12 names them PyUnstable_*; 3.11 has the underscore names.
  Resolve(api.request_extra_index, "PyUnstable_Eval_RequestCodeExtraIndex");
  if (api.request_extra_index == nullptr) Resolve(api.request_extra_index, "_PyEval_RequestCodeExtraIndex");
  Resolve(api.get_extra, "PyUnstable_Code_GetExtra");
  if (api.get_extra == nullptr) Resolve(api.get_extra, "_PyCode_GetExtra");
  Resolve(api.set_extra, "PyUnstable_Code_SetExtra");
  if (api.set_extra == nullptr) Resolve(api.set_extra, "_PyCode_SetExtra");
  Resolve(api.get_attr_string, "PyObject_GetAttrString");
  Resolve(api.unicode_as_utf8, "PyUnicode_AsUTF8AndSize");
  Resolve(api.long_as_long, "PyLong_AsLong");
  Resolve(api.dec_ref, "Py_DecRef");
  Resolve(api.err_clear, "PyErr_Clear");
  Resolve(api.add_audit_hook, "PySys_AddAuditHook");
  Resolve(api.frame_get_globals, "PyFrame_GetGlobals");
  Resolve(api.dict_get_item_string, "PyDict_GetItemString");
  Resolve(api.dict_next, "PyDict_Next");
  Resolve(api.mapping_get_item_string, "PyMapping_GetItemString");
  Resolve(api.tuple_size, "PyTuple_Size");
  Resolve(api.tuple_get_item, "PyTuple_GetItem");
  Resolve(api.type_get_flags, "PyType_GetFlags");
  api.cfunction_type = dlsym(RTLD_DEFAULT, "PyCFunction_Type");
  api.cmethod_type = dlsym(RTLD_DEFAULT, "PyCMethod_Type");
  api.method_descriptor_type = dlsym(RTLD_DEFAULT, "PyMethodDescr_Type");
  Resolve(api.thread_state_get, "PyThreadState_Get");
  Resolve(api.eval_get_frame, "PyEval_GetFrame");
  Resolve(api.eval_get_globals, "PyEval_GetGlobals");
  Resolve(api.code_addr_to_line, "PyCode_Addr2Line");
  Resolve(api.cfunction_new, "PyCFunction_NewEx");
  Resolve(api.dict_new, "PyDict_New");
  Resolve(api.dict_set_item_string, "PyDict_SetItemString");
  Resolve(api.method_function, "PyMethod_Function");
  Resolve(api.type_get_slot, "PyType_GetSlot");
  Resolve(api.generic_get_dict, "PyObject_GenericGetDict");
  Resolve(api.function_get_code, "PyFunction_GetCode");
  Resolve(api.function_get_globals, "PyFunction_GetGlobals");
  Resolve(api.dict_get_item, "PyDict_GetItem");
  Resolve(api.unicode_intern_from_string, "PyUnicode_InternFromString");
  api.function_type = dlsym(RTLD_DEFAULT, "PyFunction_Type");
  api.method_type = dlsym(RTLD_DEFAULT, "PyMethod_Type");
  api.none = static_cast<PyObject*>(dlsym(RTLD_DEFAULT, "_Py_NoneStruct"));
  Resolve(api.import_module, "PyImport_ImportModule");
  Resolve(api.call_object, "PyObject_CallObject");
  Resolve(api.inc_ref, "Py_IncRef");
  Resolve(api.add_pending_call, "Py_AddPendingCall");
  api.interpreter = CodeRangeContaining(reinterpret_cast<const void*>(api.set_profile));
  using VersionFunction = const char* (*)();
  const auto version = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  int major = 0;
  if (version == nullptr || sscanf(version(), "%d.%d", &major, &api.minor) != 2 || major != 3) api.minor = 0;
  if (api.minor == 10) {
    // PyFrameObject has no interpreter frame before 3.11: CodeOf's direct
    // reads would find the caller's code there, so the API stays in use.
    g_layout_checks = kLayoutChecks;
    g_candidate_ok[0] = g_candidate_ok[1] = false;
  }
  // Where a frame is in its code: PyFrame_GetLasti (3.11+), or 3.10's
  // frame object (LastiOf). Any other interpreter without the call is not
  // read blindly.
  const bool lasti = api.frame_get_lasti != nullptr || api.minor == 10;
  api.ok = api.set_profile != nullptr && api.frame_get_code != nullptr && api.frame_get_line_number != nullptr &&
           lasti && api.request_extra_index != nullptr && api.get_extra != nullptr && api.set_extra != nullptr &&
           api.get_attr_string != nullptr && api.unicode_as_utf8 != nullptr && api.long_as_long != nullptr &&
           api.dec_ref != nullptr && api.err_clear != nullptr && api.cfunction_type != nullptr &&
           api.method_descriptor_type != nullptr && api.interpreter.end != 0;
}

}  // namespace rlscope::preload::python
