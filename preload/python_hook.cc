// Python hook: a C-level CPython profile function (the mechanism behind
// cProfile, set with PyEval_SetProfile) that turns the interpreter's events
// into rlscope events, with no link to libpython (its API is resolved with
// dlsym when Python attaches) and no change to the user's script.
//
//   C_CALL .. C_RETURN/C_EXCEPTION of a function outside the interpreter
//       -> kPythonCall interval (callee address; calling code and line)
//   CALL of a Python function while a native call is open (a callback)
//       -> kPythonFrame interval until its RETURN: Python time again
//   CALL of a function matching an `operation` rule
//       -> kOperationPush .. kOperationPop (source kInferred)
//
// Calls into the interpreter itself (builtins such as len, dict methods)
// are Python time and are not recorded: one range check, no event.
//
// Attach: sitecustomize.py (put on PYTHONPATH by the launcher) calls
// rlscope_python_attach() through ctypes.PyDLL, i.e. holding the GIL; new
// threading.Thread threads call rlscope_python_attach_thread() from a
// threading.setprofile bootstrap. The hook runs with the GIL held, so its
// per-thread state needs no locks.
#include "python_hook.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "raw_log.h"
#include "recorder.h"
#include "rule_file.h"
#include "string_table.h"

namespace rlscope::preload {

namespace {

// Opaque CPython types: only pointers to them are handled.
struct PyObject;
struct PyFrameObject;
struct PyThreadState;
struct PyInterpreterState;
using Py_ssize_t = intptr_t;
using ProfileFunction = int (*)(PyObject*, PyFrameObject*, int, PyObject*);

// PyTrace_* event codes (stable across CPython 3.x).
constexpr int kTraceCall = 0;
constexpr int kTraceReturn = 3;
constexpr int kTraceCCall = 4;
constexpr int kTraceCException = 5;
constexpr int kTraceCReturn = 6;

constexpr uint16_t kInferredSource = static_cast<uint16_t>(wire::OperationSource::kInferred);

// The CPython API we use, resolved once with dlsym(RTLD_DEFAULT).
struct PythonApi {
  void (*set_profile)(ProfileFunction, PyObject*) = nullptr;
  void (*set_profile_all_threads)(ProfileFunction, PyObject*) = nullptr;  // 3.12+
  int (*set_profile_for)(PyThreadState*, ProfileFunction, PyObject*) = nullptr;  // 3.11: _PyEval_SetProfile
  PyInterpreterState* (*interpreter_get)() = nullptr;
  PyThreadState* (*thread_head)(PyInterpreterState*) = nullptr;
  PyThreadState* (*thread_next)(PyThreadState*) = nullptr;
  PyObject* (*frame_get_code)(PyFrameObject*) = nullptr;
  int (*frame_get_line_number)(PyFrameObject*) = nullptr;
  int (*frame_get_lasti)(PyFrameObject*) = nullptr;
  PyObject* (*get_attr_string)(PyObject*, const char*) = nullptr;
  const char* (*unicode_as_utf8)(PyObject*, Py_ssize_t*) = nullptr;
  long (*long_as_long)(PyObject*) = nullptr;
  void (*inc_ref)(PyObject*) = nullptr;
  void (*dec_ref)(PyObject*) = nullptr;
  void (*err_clear)() = nullptr;
  const void* cfunction_type = nullptr;
  const void* cmethod_type = nullptr;
  const void* method_descriptor_type = nullptr;
  // The interpreter's own code (the executable or libpython): calls into it
  // are Python time.
  uintptr_t interpreter_begin = 0;
  uintptr_t interpreter_end = 0;
  bool ok = false;
};
PythonApi g_api;

// Object layouts shared by CPython 3.11 and 3.12 (checked at attach by
// the type objects, never assumed for other types):
//   PyCFunctionObject:    PyObject_HEAD (16 bytes), PyMethodDef* m_ml
//   PyMethodDescrObject:  PyObject_HEAD, d_type, d_name, d_qualname,
//                         PyMethodDef* d_method (offset 40)
//   PyMethodDef:          const char* ml_name, void* ml_meth (offset 8)
constexpr size_t kCFunctionMethodDefOffset = 16;
constexpr size_t kMethodDescrMethodDefOffset = 40;
constexpr size_t kMethodDefFunctionOffset = 8;

inline const void* TypeOf(PyObject* object) {
  return *reinterpret_cast<void* const*>(reinterpret_cast<const char*>(object) + sizeof(Py_ssize_t));
}

inline uintptr_t LoadPointer(const void* base, size_t offset) {
  return *reinterpret_cast<const uintptr_t*>(reinterpret_cast<const char*>(base) + offset);
}

// NativeFunctionOf: the C function a C_CALL calls, or 0 if unknown.
inline uintptr_t NativeFunctionOf(PyObject* callable) {
  if (callable == nullptr) return 0;
  const void* type = TypeOf(callable);
  size_t method_def_offset;
  if (type == g_api.cfunction_type || type == g_api.cmethod_type) {
    method_def_offset = kCFunctionMethodDefOffset;
  } else if (type == g_api.method_descriptor_type) {
    method_def_offset = kMethodDescrMethodDefOffset;
  } else {
    return 0;
  }
  const uintptr_t method_def = LoadPointer(callable, method_def_offset);
  return method_def != 0 ? LoadPointer(reinterpret_cast<const void*>(method_def), kMethodDefFunctionOffset) : 0;
}

inline bool InsideInterpreter(uintptr_t address) {
  return address >= g_api.interpreter_begin && address < g_api.interpreter_end;
}

// Reading a frame's code object. PyFrame_GetCode costs a call and a
// reference count round trip on every Python call, so the hook reads the
// pointer directly once it has verified where it lives: PyFrameObject keeps
// its _PyInterpreterFrame* at offset 24 (3.11, 3.12), which keeps the code
// at offset 32 (3.11: f_code) or 0 (3.12: f_code, 3.13: f_executable).
// The first kLayoutChecks calls compare each candidate with the API's answer;
// a candidate that is right every time is used from then on, and if none is
// (another layout), the API stays in use.
constexpr size_t kFrameInterpreterFrameOffset = 24;
constexpr size_t kCodeOffsetCandidates[] = {32, 0};
constexpr int kLayoutChecks = 256;
int g_layout_checks = 0;
bool g_candidate_ok[2] = {true, true};
int g_code_offset = -1;  // Verified offset, or -1 (use the API).

inline PyObject* DirectCode(PyFrameObject* frame, size_t offset) {
  const uintptr_t interpreter_frame = LoadPointer(frame, kFrameInterpreterFrameOffset);
  return interpreter_frame != 0 ? reinterpret_cast<PyObject*>(LoadPointer(reinterpret_cast<const void*>(
                                                                  interpreter_frame), offset))
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

// --- Operation rules, compiled for the hook ---------------------------------

struct CompiledRule {
  OperationRule rule;
  uint32_t operation_id;              // Interned operation name.
  std::vector<uint32_t> unless_ids;   // Interned names of suppressing operations.
};
std::vector<CompiledRule>* g_rules = nullptr;  // Set once at attach, never freed.

constexpr int16_t kNoRule = -1;

int16_t MatchRule(const char* qualname, const char* filename) {
  if (g_rules == nullptr) return kNoRule;
  for (size_t i = 0; i < g_rules->size() && i < INT16_MAX; ++i) {
    const OperationRule& rule = (*g_rules)[i].rule;
    if (!MatchesGlob(rule.qualname_glob, qualname)) continue;
    if (!rule.file_glob.empty() && !MatchesGlob(rule.file_glob, filename)) continue;
    return static_cast<int16_t>(i);
  }
  return kNoRule;
}

// --- Per-thread state -------------------------------------------------------

// What we know about a code object, cached per thread by its address. The
// cache holds a reference, so the address cannot be reused by another code
// object while cached.
struct CodeEntry {
  PyObject* code;
  uint32_t code_id;  // Interned "qualname (file:firstline)".
  int16_t rule;
};

// A Python frame we must see return: an inferred operation, a callback
// into Python from native code, or both.
struct WatchedFrame {
  PyFrameObject* frame;
  uint64_t begin_ticks;
  uint32_t operation_id;  // 0: opens no operation.
  bool callback;
};

struct NativeCall {
  PyFrameObject* frame;
  uintptr_t function;  // C_RETURN is matched by frame and C function: 3.12
                       // passes a fresh bound-method object to each event.
  uint64_t begin_ticks;
  uint32_t code_id;
  uint16_t line;
};

// Line numbers by (code, instruction offset): PyFrame_GetLineNumber scans
// the code's line table, far too slow for every native call.
struct LineEntry {
  PyObject* code;
  int lasti;
  uint16_t line;
};

constexpr int kCodeCacheSize = 4096;
constexpr int kLineCacheSize = 4096;
constexpr int kMaxDepth = 256;

struct PythonThread {
  CodeEntry codes[kCodeCacheSize];
  LineEntry lines[kLineCacheSize];
  WatchedFrame watched[kMaxDepth];
  int watched_depth;
  NativeCall calls[kMaxDepth];
  int call_depth;
};

__thread PythonThread* t_python __attribute__((tls_model("initial-exec")));

PythonThread* CurrentPythonThread() {
  PythonThread* thread = t_python;
  if (__builtin_expect(thread != nullptr, 1)) return thread;
  if (!g_recording || t_state.untraced) return nullptr;
  void* memory = mmap(nullptr, sizeof(PythonThread), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  t_python = static_cast<PythonThread*>(memory);  // Zero-filled: empty caches and stacks.
  RecordInstant(wire::EventKind::kPythonThread, 0);
  return t_python;
}

std::string StringAttribute(PyObject* object, const char* name) {
  PyObject* value = g_api.get_attr_string(object, name);
  if (value == nullptr) {
    g_api.err_clear();
    return "?";
  }
  Py_ssize_t size = 0;
  const char* text = g_api.unicode_as_utf8(value, &size);
  std::string result = text != nullptr ? std::string(text, static_cast<size_t>(size)) : "?";
  if (text == nullptr) g_api.err_clear();
  g_api.dec_ref(value);
  return result;
}

long LongAttribute(PyObject* object, const char* name) {
  PyObject* value = g_api.get_attr_string(object, name);
  if (value == nullptr) {
    g_api.err_clear();
    return 0;
  }
  const long result = g_api.long_as_long(value);
  g_api.dec_ref(value);
  return result;
}

// LookUpCode: the cache entry of the frame's code object (slow path once
// per code object per thread: attribute reads, interning, rule matching).
const CodeEntry& LookUpCode(PythonThread* thread, PyFrameObject* frame) {
  PyObject* code = CodeOf(frame);
  CodeEntry& entry = thread->codes[(reinterpret_cast<uintptr_t>(code) >> 4) % kCodeCacheSize];
  if (__builtin_expect(entry.code == code, 1)) return entry;
  if (entry.code != nullptr) g_api.dec_ref(entry.code);
  g_api.inc_ref(code);  // The cache's own reference: the address stays this code's.
  entry.code = code;
  const std::string qualname = StringAttribute(code, "co_qualname");
  const std::string filename = StringAttribute(code, "co_filename");
  const long first_line = LongAttribute(code, "co_firstlineno");
  entry.code_id = StringTable::Intern(qualname + " (" + filename + ":" + std::to_string(first_line) + ")");
  entry.rule = MatchRule(qualname.c_str(), filename.c_str());
  return entry;
}

bool SuppressedByOpenOperation(const PythonThread* thread, const CompiledRule& rule) {
  for (uint32_t unless : rule.unless_ids) {
    for (int i = 0; i < thread->watched_depth && i < kMaxDepth; ++i) {
      if (thread->watched[i].operation_id == unless) return true;
    }
  }
  return false;
}

void OnCall(PythonThread* thread, PyFrameObject* frame) {
  const bool callback = thread->call_depth > 0;
  uint32_t operation_id = 0;
  if (g_rules != nullptr && !g_rules->empty()) {
    const CodeEntry& code = LookUpCode(thread, frame);
    if (code.rule != kNoRule) {
      const CompiledRule& rule = (*g_rules)[static_cast<size_t>(code.rule)];
      if (!SuppressedByOpenOperation(thread, rule)) operation_id = rule.operation_id;
    }
  }
  if (!callback && operation_id == 0) return;
  const uint64_t now = NowTicks();
  if (operation_id != 0) Record(wire::EventKind::kOperationPush, operation_id, now, now, 0, kInferredSource);
  if (thread->watched_depth < kMaxDepth) {
    thread->watched[thread->watched_depth] = {frame, now, operation_id, callback};
  }
  ++thread->watched_depth;
}

void OnReturn(PythonThread* thread, PyFrameObject* frame) {
  if (thread->watched_depth == 0) return;
  const int top = thread->watched_depth - 1;
  if (top >= kMaxDepth) {
    --thread->watched_depth;  // Too deep to have been stored: nothing to close.
    return;
  }
  const WatchedFrame& watched = thread->watched[top];
  if (watched.frame != frame) return;  // Not ours (entered before attach).
  const uint64_t now = NowTicks();
  if (watched.callback) Record(wire::EventKind::kPythonFrame, 0, watched.begin_ticks, now);
  if (watched.operation_id != 0) Record(wire::EventKind::kOperationPop, 0, now, now);
  --thread->watched_depth;
}

uint16_t LineOf(PythonThread* thread, PyFrameObject* frame, PyObject* code) {
  const int lasti = g_api.frame_get_lasti(frame);
  LineEntry& entry =
      thread->lines[((reinterpret_cast<uintptr_t>(code) >> 4) ^ static_cast<uintptr_t>(lasti)) % kLineCacheSize];
  if (entry.code != code || entry.lasti != lasti) {
    // The code is kept alive by the code cache entry of this call.
    const int line = g_api.frame_get_line_number(frame);
    entry = {code, lasti, static_cast<uint16_t>(line < 0 ? 0 : (line > 65535 ? 65535 : line))};
  }
  return entry.line;
}

void OnNativeCall(PythonThread* thread, PyFrameObject* frame, PyObject* callable) {
  const uintptr_t function = NativeFunctionOf(callable);
  if (function == 0 || InsideInterpreter(function)) return;
  if (thread->call_depth < kMaxDepth) {
    const CodeEntry& code = LookUpCode(thread, frame);
    const uint16_t line = LineOf(thread, frame, code.code);
    thread->calls[thread->call_depth] = {frame, function, NowTicks(), code.code_id, line};
  }
  ++thread->call_depth;
}

void OnNativeReturn(PythonThread* thread, PyFrameObject* frame, PyObject* callable) {
  // Most returns are of filtered builtins with nothing open, or in another
  // frame than the open call: rejected before resolving the function.
  if (thread->call_depth == 0) return;
  const int top = thread->call_depth - 1;
  if (top >= kMaxDepth) {
    const uintptr_t function = NativeFunctionOf(callable);
    if (function != 0 && !InsideInterpreter(function)) --thread->call_depth;
    return;
  }
  const NativeCall& call = thread->calls[top];
  if (call.frame != frame || NativeFunctionOf(callable) != call.function) return;
  Record(wire::EventKind::kPythonCall, call.code_id, call.begin_ticks, NowTicks(), call.function, call.line);
  --thread->call_depth;
}

int ProfileHook(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr) return 0;
  switch (what) {
    case kTraceCall:
      OnCall(thread, frame);
      break;
    case kTraceReturn:
      OnReturn(thread, frame);
      break;
    case kTraceCCall:
      OnNativeCall(thread, frame, arg);
      break;
    case kTraceCReturn:
    case kTraceCException:
      OnNativeReturn(thread, frame, arg);
      break;
    default:
      break;
  }
  return 0;
}

// --- Attaching ----------------------------------------------------------------

template <typename Function>
void Resolve(Function& function, const char* name) {
  function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

struct TextRangeSearch {
  uintptr_t address;
  uintptr_t begin;
  uintptr_t end;
};

int FindTextRange(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<TextRangeSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD || (header.p_flags & PF_X) == 0) continue;
    const uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    const uintptr_t end = begin + header.p_memsz;
    if (search->address >= begin && search->address < end) {
      search->begin = begin;
      search->end = end;
      return 1;
    }
  }
  return 0;
}

bool ResolvePythonApi() {
  static bool tried = false;
  if (tried) return g_api.ok;
  tried = true;
  Resolve(g_api.set_profile, "PyEval_SetProfile");
  Resolve(g_api.set_profile_all_threads, "PyEval_SetProfileAllThreads");
  Resolve(g_api.set_profile_for, "_PyEval_SetProfile");
  Resolve(g_api.interpreter_get, "PyInterpreterState_Get");
  Resolve(g_api.thread_head, "PyInterpreterState_ThreadHead");
  Resolve(g_api.thread_next, "PyThreadState_Next");
  Resolve(g_api.frame_get_code, "PyFrame_GetCode");
  Resolve(g_api.frame_get_line_number, "PyFrame_GetLineNumber");
  Resolve(g_api.frame_get_lasti, "PyFrame_GetLasti");
  Resolve(g_api.get_attr_string, "PyObject_GetAttrString");
  Resolve(g_api.unicode_as_utf8, "PyUnicode_AsUTF8AndSize");
  Resolve(g_api.long_as_long, "PyLong_AsLong");
  Resolve(g_api.inc_ref, "Py_IncRef");
  Resolve(g_api.dec_ref, "Py_DecRef");
  Resolve(g_api.err_clear, "PyErr_Clear");
  g_api.cfunction_type = dlsym(RTLD_DEFAULT, "PyCFunction_Type");
  g_api.cmethod_type = dlsym(RTLD_DEFAULT, "PyCMethod_Type");
  g_api.method_descriptor_type = dlsym(RTLD_DEFAULT, "PyMethodDescr_Type");
  TextRangeSearch search{reinterpret_cast<uintptr_t>(g_api.set_profile), 0, 0};
  if (g_api.set_profile != nullptr) dl_iterate_phdr(&FindTextRange, &search);
  g_api.interpreter_begin = search.begin;
  g_api.interpreter_end = search.end;
  g_api.ok = g_api.set_profile != nullptr && g_api.frame_get_code != nullptr &&
             g_api.frame_get_line_number != nullptr && g_api.frame_get_lasti != nullptr &&
             g_api.get_attr_string != nullptr &&
             g_api.unicode_as_utf8 != nullptr && g_api.long_as_long != nullptr && g_api.dec_ref != nullptr &&
             g_api.err_clear != nullptr && g_api.cfunction_type != nullptr &&
             g_api.method_descriptor_type != nullptr && search.end != 0;
  if (!g_api.ok) RawLog("this Python lacks parts of the C API rlscope needs; Python-level capture is off");
  return g_api.ok;
}

void LoadRules() {
  if (g_rules != nullptr) return;
  g_rules = new std::vector<CompiledRule>();
  const char* paths = getenv("RLSCOPE_RULES");
  if (paths == nullptr || *paths == '\0') return;
  RuleSet rules;
  std::string error;
  if (!LoadRuleFiles(paths, rules, &error)) {
    RawLog("%s; operations are inferred with the rules read before it", error.c_str());
  }
  for (OperationRule& rule : rules.operations) {
    CompiledRule compiled{std::move(rule), 0, {}};
    compiled.operation_id = StringTable::Intern(compiled.rule.operation);
    for (const std::string& unless : compiled.rule.unless_inside) {
      compiled.unless_ids.push_back(StringTable::Intern(unless));
    }
    g_rules->push_back(std::move(compiled));
  }
}

}  // namespace

bool ThreadRunsPython() { return t_python != nullptr; }

int AttachPythonAllThreads(const char* name) {
  if (!g_recording || !ResolvePythonApi()) return 0;
  LoadRules();
  if (g_api.set_profile_all_threads != nullptr) {
    g_api.set_profile_all_threads(&ProfileHook, nullptr);  // 3.12+
  } else if (g_api.set_profile_for != nullptr && g_api.interpreter_get != nullptr && g_api.thread_head != nullptr &&
             g_api.thread_next != nullptr) {
    for (PyThreadState* state = g_api.thread_head(g_api.interpreter_get()); state != nullptr;
         state = g_api.thread_next(state)) {
      g_api.set_profile_for(state, &ProfileHook, nullptr);  // 3.11: one thread state at a time.
    }
  } else {
    g_api.set_profile(&ProfileHook, nullptr);  // At least the calling thread.
  }
  CurrentPythonThread();  // Marks the attaching thread as a Python thread now.
  if (name != nullptr) NameCurrentThread(name);
  return 1;
}

int AttachPythonCurrentThread(const char* name) {
  if (!g_recording || !ResolvePythonApi()) return 0;
  g_api.set_profile(&ProfileHook, nullptr);
  CurrentPythonThread();
  if (name != nullptr) NameCurrentThread(name);
  return 1;
}

}  // namespace rlscope::preload

// Entry points for sitecustomize.py (called through ctypes.PyDLL, GIL held).
// `thread_name`: Python's name of the calling thread (threading), or null.
extern "C" __attribute__((visibility("default"))) int rlscope_python_attach(const char* thread_name) {
  return rlscope::preload::AttachPythonAllThreads(thread_name);
}

extern "C" __attribute__((visibility("default"))) int rlscope_python_attach_thread(const char* thread_name) {
  return rlscope::preload::AttachPythonCurrentThread(thread_name);
}
