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
//   C_CALL .. C_RETURN/C_EXCEPTION of a known blocking C function (lock
//   acquire, queue get, sleep, select, socket receive, os.read, waitpid:
//   blocking_calls.h), inside the interpreter or not
//       -> kPythonWait interval: the thread waits, it does not work
//
// Attach: sitecustomize.py (put on PYTHONPATH by the launcher) calls
// rlscope_python_attach() through ctypes.PyDLL, i.e. holding the GIL; new
// threading.Thread threads call rlscope_python_attach_thread() as their
// bootstrap starts (not through threading.setprofile, which the program
// sees and sets itself). A profile function the program sets replaces the
// hook on its thread: rlscope gives way, and AuditHook records it for the
// report. The hook runs with the GIL held, so its per-thread state needs
// no locks.
#include "preload/python_hook.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "format/code_origin.h"
#include "format/rule_file.h"
#include "preload/blocking_calls.h"
#include "preload/code_range.h"
#include "preload/gpu_activity_queue.h"
#include "preload/problem_notice.h"
#include "preload/python_api.h"
#include "preload/python_hook_sample.h"
#include "preload/raw_log.h"
#include "preload/recorder.h"
#include "preload/string_table.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

__thread int32_t t_python_hook_countdown __attribute__((tls_model("initial-exec"))) = 0;
__thread uint32_t t_python_hook_gap_state __attribute__((tls_model("initial-exec"))) = 0;
__thread bool t_python_hook_code_setup __attribute__((tls_model("initial-exec"))) = false;
std::atomic<uint64_t> g_python_hook_sample_cap_ticks{static_cast<uint64_t>(kPythonHookSampleCapNs * 5)};

void SetPythonHookSampleTicksPerNs(double ticks_per_ns) {
  if (ticks_per_ns > 0) {
    g_python_hook_sample_cap_ticks.store(static_cast<uint64_t>(kPythonHookSampleCapNs * ticks_per_ns),
                                         std::memory_order_relaxed);
  }
}

namespace {

using namespace python;  // The ABI layer (python_api.h).

constexpr uint16_t kInferredSource = static_cast<uint16_t>(wire::OperationSource::kInferred);

// The C functions whose calls are the thread's waiting, filled once at
// attach (ResolveBlockingCalls), read-only afterwards.
BlockingCalls g_blocking;

// A blocking call that returns sooner than this (an uncontended lock, a
// poll with data ready) did not wait: it stays Python time, counted, not
// recorded, so lock-heavy code (logging, Condition.__enter__) does not
// flood the stream. 4096 ticks: about 1-4 us, by the clock (TSC or ns).
constexpr uint64_t kMinWaitTicks = 4096;

// Recorded: a C call the hook times (a transition out of the interpreter,
// or a wait), as opposed to a builtin, which is Python time.
inline bool Recorded(uintptr_t function, bool* wait) {
  *wait = g_blocking.Contains(function);
  return *wait || (function != 0 && !InsideInterpreter(function));
}

// --- Operation rules, compiled for the hook ---------------------------------

struct CompiledRule {
  OperationRule rule;
  uint32_t operation_id;             // Interned operation name.
  std::vector<uint32_t> unless_ids;  // Interned names of suppressing operations.
};
std::vector<CompiledRule>* g_rules = nullptr;       // Set once at attach, never freed.
bool g_have_rules = false;                          // g_rules holds any.
std::vector<OperationRule>* g_rule_list = nullptr;  // The same rules, as MatchOperationRule takes them.

constexpr int16_t kNoRule = -1;

// --- Per-thread state -------------------------------------------------------

// What we know about a code object, kept on the code object itself (its
// co_extra slot, which CPython frees with it): no cache to collide in, no
// reference that outlives the code.
struct CodeInfo {
  uint32_t code_id;  // Interned "qualname (file:firstline)".
  int16_t rule;
  // The rule's operation and the operations it is suppressed inside,
  // copied here so a start reads no rule table (kManyUnless: more than
  // kUnless of them, read from the rule).
  static constexpr int kUnless = 3;
  static constexpr uint8_t kManyUnless = 0xFF;
  uint8_t unless_count;
  uint32_t operation_id;
  uint32_t unless_ids[kUnless];
  bool user_code;  // The user's own (code_origin.h), not a package's or the standard library's.
  // sys.monitoring: its starts and returns are not watched (python_monitoring).
  bool quiet;
  bool quiet_decided;
  // A function a C callable wraps (jax.jit's) whose traced computation
  // opened a backprop operation: every call of the wrapper is backprop;
  // else one that opened a forward pass (a flax Module.apply): every call
  // is a forward pass, whatever the function is called.
  bool computes_gradient;
  bool computes_forward;
  // Line numbers of the places the code makes native calls from: finding
  // one (PyCode_Addr2Line, PyFrame_GetLineNumber) scans the line table from
  // its start, microseconds into a long function or a flat script's loop,
  // too slow for every call. The first kLines places are kept here; the
  // rest in `more`, made at the first place past them (CachedLine).
  static constexpr int kLines = 4;
  int lasti[kLines];
  uint16_t line[kLines];
  uint8_t next_line;
  struct MoreLines* more;  // Null until needed; freed with the info.
};

// MoreLines: a code object's places past its first kLines, a table indexed
// by a hash of the instruction offset; a collision replaces the older
// place (found again by a scan when it comes back). 256 places cover the
// loop of a flat training script; 1.5 KiB, only for code that calls native
// code from more than kLines places.
struct MoreLines {
  static constexpr int kSlots = 256;
  int lasti[kSlots];
  uint16_t line[kSlots];
  static int SlotOf(int lasti) { return static_cast<int>((static_cast<uint32_t>(lasti) * 2654435761u) >> 24); }
};
static_assert(MoreLines::kSlots == 256, "SlotOf keeps the hash's top 8 bits");

// A Python frame we must see return: an inferred operation, a callback
// into Python from native code, or both.
struct WatchedFrame {
  FrameKey frame;
  uint64_t begin_ticks;
  uint32_t operation_id;  // 0: opens no operation.
  bool callback;
};

struct NativeCall {
  FrameKey frame;
  uintptr_t function;  // C_RETURN is matched by frame and C function: 3.12
                       // passes a fresh bound-method object to each event.
  uint64_t begin_ticks;
  uint32_t code_id;
  uint16_t line;
  bool wait;              // A blocking call (kPythonWait), else a transition (kPythonCall).
  uint32_t operation_id;  // The operation the call opened (a wrapped function's rule), or 0.
  CodeInfo* wrapped;      // The Python function the callable wraps, or null.
  // sys.monitoring: the callable itself, which its C_RETURN passes again
  // (the frame's stack holds it meanwhile), so the return is matched
  // without resolving its C function; null under the profile function.
  const void* callable;
};

// Where a recorded native call is made: the calling code (0: unknown),
// whether that is the user's own, and the line.
struct CallPlace {
  uint32_t code_id = 0;
  uint16_t line = 0;
  bool user_code = false;
};

// A native call as resolved: its C function (0: unknown), the callable
// (null: not kept), whether it is recorded, and whether it blocks.
struct NativeTarget {
  uintptr_t function;
  const void* callable;
  bool recorded;
  bool wait;
};

inline NativeTarget ResolveTarget(uintptr_t function, const void* callable) {
  NativeTarget target{function, callable, false, false};
  target.recorded = Recorded(function, &target.wait);
  return target;
}

// SiteEntry: what a recorded call site of builtin functions or method
// descriptors (torch's operators, tensor methods) resolved to at its last
// call, so the next call from there, of the same callable, reads one
// entry instead of following the callable to its C function, probing the
// blocking table, and reading the code's info and line table: each of
// those a load from memory in a real program, whose training step between
// two callbacks evicts the hook's data (scripts/device/RESULTS.md,
// 2026-12-05 22:40). Checked against the site (code object, offset), the
// callable and its PyMethodDef (which decides its C function), and the
// code epoch, bumped whenever a code object's info is freed, so a code
// object at a reused address never gets a dead one's line.
struct SiteEntry {
  const void* code;  // Null: empty.
  const void* callable;
  uintptr_t method_def;
  uintptr_t function;
  uint32_t epoch;
  int32_t offset;
  uint32_t code_id;
  uint16_t line;
  bool user_code;
  bool wait;
};
constexpr int kSiteSlots = 512;  // 24 KiB a thread, touched sparsely.
std::atomic<uint32_t> g_code_epoch{1};

inline unsigned SiteSlot(const void* code, int offset) {
  const uint64_t key = (reinterpret_cast<uintptr_t>(code) >> 4) ^ (static_cast<uint64_t>(offset) << 32);
  return static_cast<unsigned>((key * 0x9E3779B97F4A7C15ull) >> 55);  // 9 bits: kSiteSlots.
}
static_assert(kSiteSlots == 512, "SiteSlot keeps the hash's top 9 bits");

// Both stacks hold what the hook has seen open on this thread, which is
// not always one call stack: greenlets (gevent, eventlet) switch C stacks
// under the hook, so a call made before a switch returns (if ever) on
// another stack. A return that is not the top but matches an entry below
// it resynchronises the stack there (what lay above was switched away or
// its return was missed; counted as given up). A full stack whose top is
// on the current Python stack is a real nesting over kMaxDepth deep: the
// entries past the top are only counted (overflow), so the outer ones stay
// right. A full stack whose top is not (stale entries of other greenlets)
// is reset. Either way recording goes on; both are counted for the report.
constexpr int kMaxDepth = 256;

std::atomic<uint64_t> g_stack_resets{0};
std::atomic<uint64_t> g_entries_given_up{0};

// A counting filter of the frames on a stack, so that a return that is not
// the top (most returns: unwatched frames, builtins) is rejected in O(1)
// instead of scanning the stack: a zero slot means the frame is not there.
// 4096 slots keep it selective with a full stack (about one slot in 16 in
// use); a count that reaches 255 stays there (the frame may be there: a
// scan), so it never says no wrongly. 8 KiB a thread, touched sparsely.
constexpr int kFilterSlots = 4096;

inline unsigned FilterSlot(FrameKey frame) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(frame);
  return static_cast<unsigned>((address >> 4) ^ (address >> 16)) % kFilterSlots;
}

inline void FilterAdd(uint8_t* filter, FrameKey frame) {
  uint8_t& count = filter[FilterSlot(frame)];
  if (count != UINT8_MAX) ++count;
}

inline void FilterRemove(uint8_t* filter, FrameKey frame) {
  uint8_t& count = filter[FilterSlot(frame)];
  if (count != UINT8_MAX) --count;
}

// A frame of the user's own code open on a thread. Under sys.monitoring,
// which passes no frame to read a line from, also its code object and the
// offset of its latest call.
struct UserFrame {
  FrameKey frame;
  CodeInfo* code;
  PyObject* code_object;
  int offset;
};

// Laid out for a callback's few cache lines: in a real program the work
// between two callbacks evicts the hook's data, and each line is a load
// from memory (scripts/device/RESULTS.md, 2026-12-05 22:40). Every
// callback reads the depths, so they share the first line; a user frame's
// fields share one entry.
struct alignas(64) PythonThread {
  int watched_depth;
  int watched_overflow;  // Watched frames open past a full stack, not stored.
  int call_depth;
  int call_overflow;  // Native calls open past a full stack, not stored.
  int user_depth;
  // Watched frames open with `callback` (recorded at their end as
  // kPythonFrame): while any is, the thread's buffer marks them open
  // (recorder.h NoteCallOpen).
  int callback_frames;
  // The last kPythonUserLine recorded (code id 0: "no user frame").
  uint32_t user_line_code_id;
  uint16_t user_line;
  bool user_line_recorded;
  alignas(64) WatchedFrame watched[kMaxDepth];
  NativeCall calls[kMaxDepth];
  uint8_t watched_filter[kFilterSlots];
  uint8_t call_filter[kFilterSlots];
  // The frames of the user's own code open on this thread, innermost last,
  // so a native call made from library code can be tied to the user's line
  // that led to it (kPythonUserLine). Greenlet switches can leave stale
  // entries: a full stack is reset.
  UserFrame user_frames[kMaxDepth];
  SiteEntry sites[kSiteSlots];  // sys.monitoring only.
};

inline void GiveUp(uint64_t entries) {
  if (entries != 0) g_entries_given_up.fetch_add(entries, std::memory_order_relaxed);
}

// OnCurrentStack: `ancestor` is a caller of `frame` on this Python stack.
// Only asked when a stack is full (rare): it walks the frame chain. Under
// sys.monitoring there is no frame object to walk (`frame` null): a full
// stack is then taken as stale and reset, which a real nesting over
// kMaxDepth watched frames deep (deep recursion of an operation) costs the
// outer entries.
bool OnCurrentStack(PyFrameObject* frame, FrameKey ancestor) {
  if (frame == nullptr || g_api.frame_get_back == nullptr) return false;
  PyFrameObject* back = g_api.frame_get_back(frame);
  while (back != nullptr) {
    // New reference, but the frame stays alive: it is running.
    g_api.dec_ref(reinterpret_cast<PyObject*>(back));
    if (back == ancestor) return true;
    back = g_api.frame_get_back(back);
  }
  return false;
}

__thread PythonThread* t_python __attribute__((tls_model("initial-exec")));
pthread_key_t g_python_thread_key;

// Thread exit: give the thread's state back (threads come and go by the
// thousand in some programs).
void ReleasePythonThread(void* memory) {
  if (t_python == memory) t_python = nullptr;
  munmap(memory, sizeof(PythonThread));
}

PythonThread* CurrentPythonThread() {
  PythonThread* thread = t_python;
  if (__builtin_expect(thread != nullptr, 1)) return thread;
  if (!g_recording || t_state.untraced) return nullptr;
  void* memory = mmap(nullptr, sizeof(PythonThread), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  t_python = static_cast<PythonThread*>(memory);  // Zero-filled: empty stacks.
  pthread_setspecific(g_python_thread_key, memory);
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

void FreeCodeInfo(void* info) {
  if (info == nullptr) return;
  g_code_epoch.fetch_add(1, std::memory_order_relaxed);  // Cached sites of it are dead (SiteEntry).
  free(static_cast<CodeInfo*>(info)->more);
  free(info);
}

// LookUpCode: a code object's info, computed once per code object
// (attribute reads, interning, rule matching) and kept in its co_extra.
// `globals` (the running frame's module globals, borrowed; may be null)
// is read only the first time, for class rules.
CodeInfo* SetUpCode(PyObject* code, PyObject* globals);

// GlobalsOf: the frame's globals, a borrowed reference valid while it runs.
// 3.10 has no PyFrame_GetGlobals: the frame's f_globals attribute (a plain
// member, read once per code object).
PyObject* GlobalsOf(PyFrameObject* frame) {
  PyObject* globals = g_api.frame_get_globals != nullptr
                          ? g_api.frame_get_globals(frame)  // New reference, held by the running frame too.
                          : g_api.get_attr_string(reinterpret_cast<PyObject*>(frame), "f_globals");
  if (globals == nullptr) {
    g_api.err_clear();
    return nullptr;
  }
  g_api.dec_ref(globals);
  return globals;
}

template <typename GlobalsSource>
CodeInfo* LookUpCodeObject(PyObject* code, GlobalsSource&& globals) {
  void* extra = nullptr;
  if (__builtin_expect(g_api.get_extra(code, g_api.extra_index, &extra) == 0 && extra != nullptr, 1)) {
    return static_cast<CodeInfo*>(extra);
  }
  g_api.err_clear();
  // First sight of this code object: slow (attribute lookups, interning,
  // rule matching), so it times itself for the correction.
  const uint64_t begin = NowTicks();
  t_python_hook_code_setup = true;
  CodeInfo* info = SetUpCode(code, globals());
  if (ThreadBuffer* buffer = t_state.buffer; buffer != nullptr) {
    buffer->CountOverhead(wire::OverheadKind::kCodeSetup, NowTicks() - begin);
  }
  return info;
}

CodeInfo* LookUpCode(PyFrameObject* frame) {
  return LookUpCodeObject(CodeOf(frame), [&] { return GlobalsOf(frame); });
}

std::vector<std::string>* g_class_attributes = nullptr;  // ClassAttributesAskedFor, set with the rules.

// ClassFactsOf: for a method ("Agent.Brain.think"), the "module.qualname"
// of its class and of every class in that class's __mro__, and which of
// the attributes rules ask about (g_class_attributes) the class has;
// empty for a function, a class defined inside a function ("<locals>",
// not reachable from the module), or when the class is not found. The
// class is looked up from the module's globals by its qualified name,
// never by the frame's arguments: reading a running frame's locals is not
// safe on every version. Once per code object (attribute reads, GIL held).
ClassFacts ClassFactsOf(PyObject* globals, const std::string& qualname) {
  ClassFacts facts;
  std::vector<std::string>& names = facts.hierarchy;
  const size_t last_dot = qualname.rfind('.');
  if (last_dot == std::string::npos || qualname.find('<') < last_dot) return facts;
  if (globals == nullptr || g_api.dict_get_item_string == nullptr || g_api.tuple_size == nullptr ||
      g_api.tuple_get_item == nullptr || g_api.type_get_flags == nullptr) {
    return facts;
  }
  PyObject* current = nullptr;  // Owned once an attribute lookup made it.
  bool owned = false;
  size_t begin = 0;
  while (begin < last_dot) {
    size_t end = qualname.find('.', begin);
    if (end == std::string::npos || end > last_dot) end = last_dot;
    const std::string part = qualname.substr(begin, end - begin);
    PyObject* next = nullptr;
    if (current == nullptr) {
      next = g_api.dict_get_item_string(globals, part.c_str());  // Borrowed.
    } else {
      next = g_api.get_attr_string(current, part.c_str());  // New reference.
      if (owned) g_api.dec_ref(current);
      owned = next != nullptr;
    }
    if (next == nullptr) {
      g_api.err_clear();
      return facts;
    }
    current = next;
    begin = end + 1;
  }
  if (current != nullptr && (g_api.type_get_flags(TypeOf(current)) & kTypeSubclassFlag) != 0) {
    if (PyObject* mro = g_api.get_attr_string(current, "__mro__"); mro != nullptr) {
      const Py_ssize_t count = g_api.tuple_size(mro);
      for (Py_ssize_t i = 0; i < count; ++i) {
        PyObject* base = g_api.tuple_get_item(mro, i);  // Borrowed.
        if (base == nullptr) break;
        names.push_back(StringAttribute(base, "__module__") + "." + StringAttribute(base, "__qualname__"));
      }
      g_api.dec_ref(mro);
    }
    g_api.err_clear();
    if (g_class_attributes != nullptr) {
      for (const std::string& attribute : *g_class_attributes) {
        if (PyObject* value = g_api.get_attr_string(current, attribute.c_str()); value != nullptr) {
          facts.attributes.push_back(attribute);
          g_api.dec_ref(value);
        } else {
          g_api.err_clear();
        }
      }
    }
  }
  if (owned) g_api.dec_ref(current);
  return facts;
}

// QualnameHolding: the __qualname__ of the function whose code is `code`
// when `candidate` is that function, or a staticmethod, classmethod or
// property (its fget) of it, or wraps it (functools.wraps's __wrapped__),
// a few levels deep; else "".
std::string QualnameHolding(PyObject* candidate, PyObject* code) {
  constexpr int kDepth = 4;
  PyObject* held[kDepth] = {};  // The references this walk took.
  std::string qualname;
  for (int depth = 0; depth < kDepth && candidate != nullptr; ++depth) {
    const bool function = TypeOf(candidate) == g_api.function_type;
    if (function && g_api.function_get_code(candidate) == code) {
      qualname = StringAttribute(candidate, "__qualname__");
      break;
    }
    // A function may wrap the one sought; a descriptor holds it.
    static constexpr const char* kOfFunction[] = {"__wrapped__"};
    static constexpr const char* kOfDescriptor[] = {"__func__", "fget"};
    PyObject* next = nullptr;
    for (const char* attribute :
         function ? std::span<const char* const>(kOfFunction) : std::span<const char* const>(kOfDescriptor)) {
      next = g_api.get_attr_string(candidate, attribute);
      if (next != nullptr) break;
      g_api.err_clear();
    }
    held[depth] = next;
    candidate = next;
  }
  for (PyObject* reference : held) {
    if (reference != nullptr) g_api.dec_ref(reference);
  }
  return qualname;
}

// QualnameOf: `code`'s qualified name ("Agent.act"), which rules match.
// 3.11+ keep it on the code object (co_qualname); 3.10 only on functions,
// which a profile event does not name. There it is looked up, once per
// code object, where the code's module keeps it: the module's function of
// the code's name, else the method of that name in one of the module's
// classes (a class inside a class or a function is not searched), whose
// code is this code; found nowhere, the bare name.
std::string QualnameOf(PyObject* code, PyObject* globals) {
  if (g_api.minor != 10) return StringAttribute(code, "co_qualname");
  const std::string name = StringAttribute(code, "co_name");
  if (globals == nullptr || name[0] == '<' || g_api.dict_next == nullptr || g_api.mapping_get_item_string == nullptr ||
      g_api.function_get_code == nullptr || g_api.function_type == nullptr || g_api.type_get_flags == nullptr) {
    return name;
  }
  // The module's function of that name (borrowed from its globals).
  if (std::string found = QualnameHolding(g_api.dict_get_item_string(globals, name.c_str()), code); !found.empty()) {
    return found;
  }
  g_api.err_clear();
  constexpr int kMostGlobals = 4096;  // A bound on a module's set-up cost.
  Py_ssize_t position = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  for (int seen = 0; seen < kMostGlobals && g_api.dict_next(globals, &position, &key, &value) != 0; ++seen) {
    if ((g_api.type_get_flags(TypeOf(value)) & kTypeSubclassFlag) == 0) continue;
    PyObject* own = g_api.get_attr_string(value, "__dict__");  // The class's own attributes, not inherited.
    if (own == nullptr) {
      g_api.err_clear();
      continue;
    }
    PyObject* member = g_api.mapping_get_item_string(own, name.c_str());  // New reference.
    g_api.dec_ref(own);
    if (member == nullptr) {
      g_api.err_clear();
      continue;
    }
    std::string found = QualnameHolding(member, code);
    g_api.dec_ref(member);
    if (!found.empty()) return found;
  }
  return name;
}

CodeInfo* SetUpCode(PyObject* code, PyObject* globals) {
  auto* info = static_cast<CodeInfo*>(calloc(1, sizeof(CodeInfo)));
  if (info == nullptr) return nullptr;
  const std::string qualname = QualnameOf(code, globals);
  const std::string filename = StringAttribute(code, "co_filename");
  const long first_line = LongAttribute(code, "co_firstlineno");
  info->code_id = StringTable::Intern(qualname + " (" + filename + ":" + std::to_string(first_line) + ")");
  info->rule = kNoRule;
  info->user_code = OriginOfPath(filename).kind == CodeOrigin::Kind::kUser;
  if (g_rule_list != nullptr) {
    const std::string module = ModuleOfPath(filename);
    const CodeFacts facts{qualname.c_str(), filename.c_str(), module.c_str(), info->user_code};
    bool classes_read = false;
    ClassFacts classes;
    const int rule = MatchOperationRule(*g_rule_list, facts, [&]() -> const ClassFacts& {
      if (!classes_read) classes = ClassFactsOf(globals, qualname);
      classes_read = true;
      return classes;
    });
    if (rule >= 0 && rule < INT16_MAX) {
      info->rule = static_cast<int16_t>(rule);
      const CompiledRule& compiled = (*g_rules)[static_cast<size_t>(rule)];
      info->operation_id = compiled.operation_id;
      if (compiled.unless_ids.size() > CodeInfo::kUnless) {
        info->unless_count = CodeInfo::kManyUnless;
      } else {
        info->unless_count = static_cast<uint8_t>(compiled.unless_ids.size());
        std::copy(compiled.unless_ids.begin(), compiled.unless_ids.end(), info->unless_ids);
      }
    }
  }
  for (int& lasti : info->lasti) lasti = -1;
  if (g_api.set_extra(code, g_api.extra_index, info) != 0) {
    g_api.err_clear();
    free(info);
    return nullptr;
  }
  return info;
}

bool OperationOpen(const PythonThread* thread, uint32_t operation_id) {
  for (int i = 0; i < thread->watched_depth; ++i) {
    if (thread->watched[i].operation_id == operation_id) return true;
  }
  return false;
}

// Suppressed: whether `code`'s rule (it has one) is suppressed by an
// operation open on the thread (its unless-inside).
bool Suppressed(const PythonThread* thread, const CodeInfo* code) {
  if (__builtin_expect(code->unless_count == CodeInfo::kManyUnless, 0)) {
    for (uint32_t unless : (*g_rules)[static_cast<size_t>(code->rule)].unless_ids) {
      if (OperationOpen(thread, unless)) return true;
    }
    return false;
  }
  for (int u = 0; u < code->unless_count; ++u) {
    if (OperationOpen(thread, code->unless_ids[u])) return true;
  }
  return false;
}

// CountUnrecorded: a profile event that leaves no record still costs the
// program the hook's dispatch; counted for the correction. (A Python call
// that opens an operation is counted here too: its push/pop records cost
// extra, calibrated separately.)
inline void CountUnrecorded(wire::OverheadKind kind) {
  if (ThreadBuffer* buffer = t_state.buffer; __builtin_expect(buffer != nullptr, 1)) buffer->CountOverhead(kind);
}

// CloseWatchedAbove: ends the watched frames from the top down to index
// `first` (included), innermost first, so the thread's operation pushes
// and pops stay balanced.
void CloseWatchedAbove(PythonThread* thread, int first) {
  // The records' time is read before they are appended: marked
  // (recorder.h), by the callback frames' mark while one is open (it is
  // cleared below, after them), else for the operations' pops here.
  const MarkScope instants(ThreadBuffer::kOpenInstant, thread->callback_frames <= 0 && t_state.buffer != nullptr);
  const uint64_t now = NowTicks();
  for (int i = thread->watched_depth - 1; i >= first; --i) {
    const WatchedFrame& watched = thread->watched[i];
    if (watched.callback) {
      Record(wire::EventKind::kPythonFrame, 0, watched.begin_ticks, now);
      --thread->callback_frames;
    }
    if (watched.operation_id != 0) Record(wire::EventKind::kOperationPop, 0, now, now);
    FilterRemove(thread->watched_filter, watched.frame);
  }
  thread->watched_depth = first;
  // Cleared once every callback frame's record is in the ring.
  if (thread->callback_frames <= 0) {
    thread->callback_frames = 0;
    NoteCallClosed(ThreadBuffer::kOpenPythonCallback);
  }
}

// WatchOf: whether a call of `frame` is watched now (*callback, and the
// operation it opens or 0). Asked again at a return while frames past a
// full stack are open: it gives the same answer as at their call, since
// nothing is stored meanwhile.
bool WatchOf(const PythonThread* thread, const CodeInfo* code, bool* callback, uint32_t* operation_id) {
  *callback = thread->call_depth > 0 || thread->call_overflow > 0;
  *operation_id = 0;
  if (code != nullptr && code->rule != kNoRule && !Suppressed(thread, code)) *operation_id = code->operation_id;
  return *callback || *operation_id != 0;
}

// TrackUserFrame: a call of the user's own code opens a user frame.
inline void TrackUserFrame(PythonThread* thread, FrameKey frame, CodeInfo* code, PyObject* code_object) {
  if (code == nullptr || !code->user_code) return;
  if (thread->user_depth >= kMaxDepth) thread->user_depth = 0;  // Stale entries (greenlets): start again.
  thread->user_frames[thread->user_depth] = {frame, code, code_object, -1};
  ++thread->user_depth;
}

// OnCall: `frame` starts (or resumes) running `code`. `legacy_frame`: the
// frame object under the profile function, null under sys.monitoring;
// `code_object`: the code under sys.monitoring (for its lines).
void OnCall(PythonThread* thread, FrameKey frame, CodeInfo* code, PyFrameObject* legacy_frame, PyObject* code_object) {
  TrackUserFrame(thread, frame, code, code_object);
  bool callback;
  uint32_t operation_id;
  if (!WatchOf(thread, code, &callback, &operation_id)) return;
  if (thread->watched_depth >= kMaxDepth) {
    if (thread->watched_overflow > 0 || OnCurrentStack(legacy_frame, thread->watched[kMaxDepth - 1].frame)) {
      ++thread->watched_overflow;  // Nested past the top: counted, not stored.
      return;
    }
    CloseWatchedAbove(thread, 0);  // Stale entries: reset, closing them.
    g_stack_resets.fetch_add(1, std::memory_order_relaxed);
  }
  if (callback && thread->callback_frames++ == 0) MarkCallOpen(ThreadBuffer::kOpenPythonCallback);
  // An operation's push: its time is read before it is appended (marked).
  const MarkScope push(ThreadBuffer::kOpenInstant, operation_id != 0 && !callback && t_state.buffer != nullptr);
  const uint64_t now = NowTicks();
  if (operation_id != 0) Record(wire::EventKind::kOperationPush, operation_id, now, now, 0, kInferredSource);
  thread->watched[thread->watched_depth] = {frame, now, operation_id, callback};
  ++thread->watched_depth;
  FilterAdd(thread->watched_filter, frame);
}

// OnReturn: `frame` returns (or suspends). `code_of()` gives its code's
// info, asked only while frames past a full stack are open.
template <typename CodeOfFrame>
void OnReturn(PythonThread* thread, FrameKey frame, CodeOfFrame&& code_of) {
  if (thread->user_depth > 0 && thread->user_frames[thread->user_depth - 1].frame == frame) --thread->user_depth;
  int depth = thread->watched_depth;
  if (depth == 0) return;
  // Usually the top (O(1)).
  if (thread->watched[depth - 1].frame == frame) {
    GiveUp(static_cast<uint64_t>(thread->watched_overflow));  // Returns missed above it.
    thread->watched_overflow = 0;
    CloseWatchedAbove(thread, depth - 1);
    return;
  }
  if (thread->watched_overflow > 0) {
    bool callback;
    uint32_t operation_id;
    if (WatchOf(thread, code_of(), &callback, &operation_id)) --thread->watched_overflow;
    return;
  }
  // Below the top after a stack switch (greenlets) or a missed return; not
  // there at all (the usual case: not watched, or entered before attach)
  // is told by the filter without a scan.
  if (thread->watched_filter[FilterSlot(frame)] == 0) return;
  while (depth > 0 && thread->watched[depth - 1].frame != frame) --depth;
  if (depth == 0) return;
  GiveUp(static_cast<uint64_t>(thread->watched_depth - depth));
  CloseWatchedAbove(thread, depth - 1);
}

// CachedLine: the line of instruction `lasti` of `code` from its cached
// places (CodeInfo::lasti, then CodeInfo::more), computing it with
// `line_of()` on a miss. The first kLines places stay inline for good;
// later ones go to `more`, made at the first of them (without memory, the
// line is computed every time, as before).
template <typename LineOfInstruction>
uint16_t CachedLine(CodeInfo* code, int lasti, LineOfInstruction&& line_of) {
  for (int i = 0; i < CodeInfo::kLines; ++i) {
    if (code->lasti[i] == lasti) return code->line[i];
  }
  const int more_slot = MoreLines::SlotOf(lasti);
  if (code->more != nullptr && code->more->lasti[more_slot] == lasti) return code->more->line[more_slot];
  const int computed = line_of();
  const auto line = static_cast<uint16_t>(computed < 0 ? 0 : (computed > 65535 ? 65535 : computed));
  if (code->next_line < CodeInfo::kLines) {
    code->lasti[code->next_line] = lasti;
    code->line[code->next_line++] = line;
    return line;
  }
  if (code->more == nullptr) {
    // Zeroed: an empty place (-1) asked for reads line 0, as inline.
    code->more = static_cast<MoreLines*>(calloc(1, sizeof(MoreLines)));
    if (code->more == nullptr) return line;
    for (int& place : code->more->lasti) place = -1;
  }
  code->more->lasti[more_slot] = lasti;
  code->more->line[more_slot] = line;
  return line;
}

uint16_t LineOf(CodeInfo* code, PyFrameObject* frame) {
  return CachedLine(code, LastiOf(frame), [&] { return g_api.frame_get_line_number(frame); });
}

// LineAt: the line of the instruction at byte `offset` of `code_object`
// (sys.monitoring's offsets), cached in its info like LineOf.
uint16_t LineAt(CodeInfo* code, PyObject* code_object, int offset) {
  if (offset < 0 || g_api.code_addr_to_line == nullptr) return 0;
  return CachedLine(code, offset, [&] { return g_api.code_addr_to_line(code_object, offset); });
}

// Under sys.monitoring a user frame's line is read from the frame itself
// (RunningOffset) where it is found on the running thread's chain within
// kMaxFrameWalk callers: the offset of its latest reported call goes stale
// once sites are disabled (a class called, `with torch.no_grad():`, then
// library code that calls native code). A stale entry (a greenlet's) is
// never found, so never read. The first kOffsetChecks calls made from user
// frames compare the frame's offset with the event's; one miss and the
// latest call's offset is used from then on.
constexpr int kMaxFrameWalk = 64;
constexpr int kOffsetChecks = 256;
int g_offset_checks = 0;
bool g_running_offsets = true;

// CheckRunningOffset: a call at byte `offset` of `code` made by `frame`
// (the event's own) against the frame's running instruction.
void CheckRunningOffset(FrameKey frame, PyObject* code, int offset) {
  ++g_offset_checks;
  if (RunningOffset(frame, code) == offset) return;
  g_running_offsets = false;
  ReportProblem("python-lines",
                "could not read a frame's running instruction on this Python; the user's line behind a call "
                "made from library code is the line of the user's latest reported call");
}

// UserFrameOffset: the offset `user_frame` (of `code`) runs now, or -1
// (not found from `frame`, the running one, within kMaxFrameWalk).
int UserFrameOffset(FrameKey frame, FrameKey user_frame, PyObject* code) {
  if (!g_running_offsets || g_frame_objects || g_offset_checks == 0) return -1;
  for (int i = 0; i < kMaxFrameWalk && frame != nullptr; ++i, frame = CallerFrame(frame)) {
    if (frame == user_frame) return RunningOffset(frame, code);
  }
  return -1;
}

// MarkUserLine: before a native call made from library code by `frame`,
// record the user's innermost line when it differs from the last one
// recorded (code id 0 when no user frame is open), so the analysis can tie
// the call to the line in the user's script that led to it.
void MarkUserLine(PythonThread* thread, FrameKey frame) {
  uint32_t code_id = 0;
  uint16_t line = 0;
  if (thread->user_depth > 0) {
    const int top = thread->user_depth - 1;
    const UserFrame& user = thread->user_frames[top];
    code_id = user.code->code_id;
    if (user.code_object != nullptr) {
      const int running = UserFrameOffset(frame, user.frame, user.code_object);
      line = LineAt(user.code, user.code_object, running >= 0 ? running : user.offset);
    } else {
      line = LineOf(user.code, const_cast<PyFrameObject*>(static_cast<const PyFrameObject*>(user.frame)));
    }
  }
  if (thread->user_line_recorded && thread->user_line_code_id == code_id && thread->user_line == line) return;
  if (!thread->user_line_recorded && code_id == 0) return;  // Nothing to undo.
  RecordInstant(wire::EventKind::kPythonUserLine, code_id, 0, line);
  thread->user_line_recorded = true;
  thread->user_line_code_id = code_id;
  thread->user_line = line;
}

void PopCalls(PythonThread* thread, int first);

// OnNativeCall: `frame` calls `target`; false when that is a builtin
// (Python time: counted, not recorded). For a call that is recorded,
// `where(&place)` tells where it is made (CallPlace), and
// `opens(&wrapped)` the operation the call opens until it returns (0:
// none) and the Python function the callable wraps (null: none).
template <typename Where, typename Opens>
bool OnNativeCall(PythonThread* thread, FrameKey frame, const NativeTarget& target, PyFrameObject* legacy_frame,
                  Where&& where, Opens&& opens) {
  if (!target.recorded) {
    CountUnrecorded(wire::OverheadKind::kPythonBuiltin);
    return false;
  }
  HookMark(HookStep::kRecorded);
  if (thread->call_depth >= kMaxDepth) {
    if (thread->call_overflow > 0 || OnCurrentStack(legacy_frame, thread->calls[kMaxDepth - 1].frame)) {
      ++thread->call_overflow;  // Nested past the top: counted, not stored.
      return true;
    }
    // Stale entries: what is open will not be recorded, what follows will.
    PopCalls(thread, 0);
    g_stack_resets.fetch_add(1, std::memory_order_relaxed);
  }
  // Outside a capture window (capture_gate.h) only what opens an
  // operation is kept: the call is not stored, so neither its line nor its
  // times are read, and its return finds nothing open. Still "recorded"
  // (true): a builtin's site is disabled for good, this one only until
  // capture opens (MonitorCall). After the overflow count, which its
  // return undoes.
  CodeInfo* wrapped = nullptr;
  uint32_t operation_id = 0;
  const bool closed = __builtin_expect(!CaptureOpen(), 0);
  if (closed) {
    operation_id = opens(&wrapped);
    if (operation_id == 0) return true;
  }
  CallPlace place;
  where(&place);
  if (!place.user_code) MarkUserLine(thread, frame);
  HookMark(HookStep::kWhere);
  if (!closed) operation_id = opens(&wrapped);
  HookMark(HookStep::kOpens);
  // The outermost stored call marks the thread's native calls open
  // (recorder.h NoteCallOpen); PopCalls clears the mark at depth 0.
  if (thread->call_depth == 0) MarkCallOpen(ThreadBuffer::kOpenPythonCall);
  const uint64_t now = NowTicks();
  if (operation_id != 0) Record(wire::EventKind::kOperationPush, operation_id, now, now, 0, kInferredSource);
  thread->calls[thread->call_depth] = {frame,       target.function, now,     place.code_id,  place.line,
                                       target.wait, operation_id,    wrapped, target.callable};
  ++thread->call_depth;
  FilterAdd(thread->call_filter, frame);
  HookMark(HookStep::kStore);
  return true;
}

// PopCalls: the open calls from index `first` up leave the stack,
// innermost first, closing the operations they opened.
void PopCalls(PythonThread* thread, int first) {
  uint64_t now = 0;
  for (int i = thread->call_depth - 1; i >= first; --i) {
    FilterRemove(thread->call_filter, thread->calls[i].frame);
    if (thread->calls[i].operation_id != 0) {
      if (now == 0) now = NowTicks();
      Record(wire::EventKind::kOperationPop, 0, now, now);
    }
  }
  thread->call_depth = first;
  if (first == 0) NoteCallClosed(ThreadBuffer::kOpenPythonCall);
}

// OnNativeReturn: a C call made by `frame` through `callable` (null:
// unknown) returns; `function_of()` tells which C function it was, asked
// only when something is open there and the callable is not the one
// stored.
template <typename FunctionOf>
void OnNativeReturn(PythonThread* thread, FrameKey frame, const void* callable, FunctionOf&& function_of) {
  // Most returns are of filtered builtins with nothing open, or in another
  // frame than the open calls: rejected before resolving the function.
  int depth = thread->call_depth;
  if (depth == 0) return;
  if (thread->calls[depth - 1].frame != frame) {
    if (thread->call_overflow > 0) {
      // One of the calls past the top returns (they nest): only what the
      // call side would have stored counts.
      bool wait;
      if (Recorded(function_of(), &wait)) --thread->call_overflow;
      return;
    }
    if (thread->call_filter[FilterSlot(frame)] == 0) return;  // Not on the stack: no scan.
    // A frame blocked in an open call makes no other call, so a match below
    // the top means a stack switch (greenlets) or a missed return: the
    // calls above it are given up.
    while (depth > 0 && thread->calls[depth - 1].frame != frame) --depth;
    if (depth == 0) return;
  }
  const NativeCall& call = thread->calls[depth - 1];
  if ((callable == nullptr || callable != call.callable) && function_of() != call.function) return;
  const uint64_t now = NowTicks();
  if (!call.wait) {
    Record(wire::EventKind::kPythonCall, call.code_id, call.begin_ticks, now, call.function, call.line);
  } else if (now - call.begin_ticks >= kMinWaitTicks) {
    Record(wire::EventKind::kPythonWait, call.code_id, call.begin_ticks, now, call.function, call.line);
  } else {
    CountUnrecorded(wire::OverheadKind::kPythonBuiltin);  // An uncontended lock: Python time, as before.
  }
  GiveUp(static_cast<uint64_t>(thread->call_depth - depth + thread->call_overflow));
  thread->call_overflow = 0;
  PopCalls(thread, depth - 1);
}

// ProfileHook: the profile-function backend (CPython 3.10, 3.11; 3.12+
// when sys.monitoring is not to be had).
int ProfileHook(PyObject*, PyFrameObject* frame, int what, PyObject* arg) {
  PythonHookSample sample;
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr) return 0;
  switch (what) {
    case kTraceCall:
      sample.set_part(HookPart::kStart);
      CountUnrecorded(wire::OverheadKind::kPythonCall);
      OnCall(thread, frame, LookUpCode(frame), frame, nullptr);
      break;
    case kTraceReturn:
      sample.set_part(HookPart::kReturn);
      OnReturn(thread, frame, [&] { return LookUpCode(frame); });
      break;
    case kTraceCCall: {
      const NativeTarget target = ResolveTarget(NativeFunctionOf(arg), nullptr);
      HookMark(HookStep::kCallable);
      const bool recorded = OnNativeCall(
          thread, frame, target, frame,
          [&](CallPlace* place) {
            if (CodeInfo* code = LookUpCode(frame); code != nullptr) {
              *place = {code->code_id, LineOf(code, frame), code->user_code};
            }
          },
          [](CodeInfo**) { return uint32_t{0}; });  // The profile function sees no wrapping callables.
      sample.set_part(recorded ? HookPart::kCallRecorded : HookPart::kCallBuiltin);
      break;
    }
    case kTraceCReturn:
    case kTraceCException:
      sample.set_part(HookPart::kNativeReturn);
      OnNativeReturn(thread, frame, nullptr, [&] { return NativeFunctionOf(arg); });
      break;
    default: break;
  }
  return 0;
}

// --- sys.monitoring (PEP 669): the backend for CPython 3.12+ ---------------
//
// On 3.12 the profile function is itself emulated on sys.monitoring, and
// the emulation materialises a frame object for every event; it also
// reports C calls only for builtin functions and method descriptors, so a
// jitted JAX function or a numpy ufunc (objects of their own C types)
// leaves no trace. Here rlscope is a sys.monitoring tool of its own: its
// C callbacks (PyCFunction objects, registered from sitecustomize.py)
// receive the code object and instruction offset, and a CALL event for
// every callable. A frame is told by its interpreter frame, read from the
// thread state (no frame object is made).
//
//   PY_START, PY_RESUME, PY_THROW   -> OnCall (a generator's resumption is
//                                      a call, as under the profile function)
//   PY_RETURN, PY_YIELD, PY_UNWIND  -> OnReturn
//   CALL of a non-Python callable   -> OnNativeCall (what its type runs:
//                                      the C function, vectorcall or tp_call)
//   C_RETURN, C_RAISE               -> OnNativeReturn
//
// Where an event cannot matter the callback returns sys.monitoring.DISABLE,
// and the interpreter stops making it there:
//   - starts and returns of a library's code (not the user's own) that
//     matches no rule and was first entered outside any native call: it
//     opens no operation, is no user frame, and is taken as no callback
//     from native code. What that misses: such code called back from
//     native code later (its time inside the native call then counts as
//     the native call's, not as Python);
//   - a call site whose callable is inside the interpreter (len,
//     isinstance, list.append, a class, an instance of a Python class):
//     Python time, never recorded. What that misses: the same site
//     calling a native function later (a duck-typed `x.copy()` given a
//     dict first, then a numpy array), whose time then counts as Python.
//   - once capture has been closed for kDisableAfterClosedNs
//     (capture_gate.h), a call site whose call opens no operation: nothing
//     of it is recorded then. When capture opens again,
//     sys.monitoring.restart_events() enables those sites again: at the
//     next callback, or through Py_AddPendingCall at the interpreter's
//     next check, so a loop of nothing but disabled sites gets them back
//     too. What that costs: every site disabled so far, ours and other
//     tools', fires once more after each opening (hence the delay: short
//     gaps between windows disable nothing); and a site that opened no
//     operation while closed but would later (a duck-typed call given a
//     jitted function) is not seen until capture opens.
//   - a call site whose callable is a Python function (its start is an
//     event of its own): the site's CALL event is needed only for the
//     user's line while that line is read from the latest call's offset
//     (UserOffsetsNeedSite). In CleanRL's GPU scripts these were over
//     half of all callbacks. What that misses: as for the interpreter's
//     callables above, the same site calling a native function later.
// Every site that called a recorded (native or blocking) function stays
// enabled.
// RLSCOPE_PYTHON_DISABLE=0 turns all of it off.

bool g_monitoring = false;  // The backend in use for this process.

// CheckFrameLayout: on the first starts, the frame read must be running
// `code` (an interpreter frame's first word is its code; 3.14 tags it in
// the low bits). One miss and frame objects are used from then on, the
// stacks started again (their entries were keyed the other way).
void CheckFrameLayout(PythonThread* thread, FrameKey frame, PyObject* code) {
  ++g_frame_checks;
  const uintptr_t first = frame != nullptr ? LoadPointer(frame, 0) & ~uintptr_t{7} : 0;
  if (first == reinterpret_cast<uintptr_t>(code)) return;
  g_frame_objects = true;
  CloseWatchedAbove(thread, 0);
  PopCalls(thread, 0);
  thread->user_depth = 0;
  ReportProblem("python-frames",
                "could not read the running frame on this Python; frames are told apart by "
                "frame objects instead (slower)");
}

// The callbacks (METH_FASTCALL). None is immortal on 3.12+: returned as
// is, without a reference of its own.
PyObject* g_disable = nullptr;  // sys.monitoring.DISABLE, or None when disabling is off.
// sys.monitoring.restart_events (a reference of ours; null: none), and
// whether a site was disabled while capture was closed since it last ran.
PyObject* g_restart_events = nullptr;
std::atomic<bool> g_disabled_while_closed{false};
constexpr int64_t kDisableAfterClosedNs = 100'000'000;

// RestartAfterClosedCapture: capture is open again, so the sites disabled
// while it was closed are enabled again (with the GIL: a callback's or a
// pending call's).
void RestartAfterClosedCapture() {
  if (!g_disabled_while_closed.exchange(false, std::memory_order_relaxed) || g_restart_events == nullptr) return;
  PyObject* result = g_api.call_object(g_restart_events, nullptr);
  if (result != nullptr) {
    g_api.dec_ref(result);
  } else {
    g_api.err_clear();
  }
}

int RestartPending(void*) {
  if (CaptureOpen()) RestartAfterClosedCapture();
  return 0;
}

// OnCaptureOpened: the gate's listener (any thread, no GIL): schedules the
// restart where sites were disabled.
void OnCaptureOpened() {
  if (g_disabled_while_closed.load(std::memory_order_relaxed) && g_api.add_pending_call != nullptr) {
    g_api.add_pending_call(&RestartPending, nullptr);
  }
}

inline void RestartIfCaptureReopened() {
  if (__builtin_expect(g_disabled_while_closed.load(std::memory_order_relaxed), 0) && CaptureOpen()) {
    RestartAfterClosedCapture();
  }
}

// Quiet: whether `code`'s starts and returns can be disabled, decided at
// its first start (see above).
inline bool Quiet(const PythonThread* thread, CodeInfo* code) {
  if (code == nullptr) return false;
  if (!code->quiet_decided) {
    code->quiet_decided = true;
    code->quiet = !code->user_code && code->rule == kNoRule && thread->call_depth == 0 && thread->call_overflow == 0;
  }
  return code->quiet;
}

void NoteTracedOperation(PythonThread* thread, const CodeInfo* code);  // Wrapped callables, below.

PyObject* MonitorStart(PyObject*, PyObject* const* args, Py_ssize_t nargs) {  // code, offset
  const PythonHookSample sample(HookPart::kStart);
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr || nargs < 1) return g_api.none;
  PyObject* code = args[0];
  RestartIfCaptureReopened();
  const FrameKey frame = FrameKeyNow();
  if (__builtin_expect(g_frame_checks < kFrameChecks, 0) && !g_frame_objects) {
    CheckFrameLayout(thread, frame, code);
    if (g_frame_objects) return g_api.none;  // Keyed the other way from the next event on.
  }
  CountUnrecorded(wire::OverheadKind::kPythonCall);
  CodeInfo* info = LookUpCodeObject(code, RunningGlobals);
  if (Quiet(thread, info)) return g_disable;
  NoteTracedOperation(thread, info);
  OnCall(thread, frame, info, nullptr, code);
  return g_api.none;
}

PyObject* MonitorReturn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {  // code, offset, value
  const PythonHookSample sample(HookPart::kReturn);
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr || nargs < 1) return g_api.none;
  CodeInfo* info = LookUpCodeObject(args[0], RunningGlobals);
  if (info != nullptr && info->quiet) return g_disable;
  OnReturn(thread, FrameKeyNow(), [&] { return info; });
  return g_api.none;
}

// MonitorUnwind: PY_UNWIND is not a local event: DISABLE may not be
// returned from it.
PyObject* MonitorUnwind(PyObject*, PyObject* const* args, Py_ssize_t nargs) {  // code, offset, exception
  const PythonHookSample sample;
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr || nargs < 1) return g_api.none;
  OnReturn(thread, FrameKeyNow(), [&] { return LookUpCodeObject(args[0], RunningGlobals); });
  return g_api.none;
}

// MonitorThrow: PY_THROW (a generator resumed with an exception) is not
// local either.
PyObject* MonitorThrow(PyObject*, PyObject* const* args, Py_ssize_t nargs) {  // code, offset, exception
  const PythonHookSample sample;
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr || nargs < 1) return g_api.none;
  CodeInfo* info = LookUpCodeObject(args[0], RunningGlobals);
  if (info != nullptr && info->quiet) return g_api.none;
  OnCall(thread, FrameKeyNow(), info, nullptr, args[0]);
  return g_api.none;
}

// --- Wrapped callables: a jitted function is the function it compiles ------
//
// jax.jit(f), and wrappers of other C types made with functools.wraps,
// keep f as `__wrapped__`. A call of the wrapper runs f's computation
// (compiled) without running f's code, so no start of f is seen: the call
// itself takes f's operation rule (a jitted `update` is backprop, a jitted
// flax `Module.apply` a forward pass), open for as long as it runs. Where f
// has no rule, what its first call traced decides (NoteTracedOperation): a
// gradient transform makes every call backprop, a module applied a
// forward pass (`pick = jax.jit(lambda p, o: policy.apply(p, o))`).
// Instances of types without instance dicts cannot hold `__wrapped__`
// (json's encoder, ctypes' own, numpy's ufuncs): told once per type.
// A callable looked up and found unwrapped is remembered by its address
// (a table without references: a new callable at a reused address is
// taken for unwrapped, its operation missed; rare).
constexpr int kWrapperTypes = 64;
const void* g_wrapper_types[kWrapperTypes];
bool g_wrapper_type_has_dicts[kWrapperTypes];
int g_wrapper_type_count = 0;
constexpr size_t kUnwrappedSlots = 1024;
constexpr int kMaxWrappedChain = 4;  // Wrappers of wrappers followed (WrappedCode).
const void* g_unwrapped[kUnwrappedSlots];

bool InstancesHaveDicts(const void* type) {
  for (int i = 0; i < g_wrapper_type_count; ++i) {
    if (g_wrapper_types[i] == type) return g_wrapper_type_has_dicts[i];
  }
  PyObject* offset = g_api.get_attr_string(const_cast<PyObject*>(static_cast<const PyObject*>(type)), "__dictoffset__");
  long value = 0;
  if (offset != nullptr) {
    value = g_api.long_as_long(offset);
    g_api.dec_ref(offset);
  }
  g_api.err_clear();
  if (g_wrapper_type_count < kWrapperTypes) {
    g_wrapper_types[g_wrapper_type_count] = type;
    g_wrapper_type_has_dicts[g_wrapper_type_count] = value != 0;
    ++g_wrapper_type_count;
  }
  return value != 0;
}

// The key "__wrapped__", interned once (PrepareMonitoring), so a lookup
// makes no string: a jitted function's every call looks it up. Null: the
// key is made per lookup instead.
PyObject* g_wrapped_key = nullptr;

// OwnWrapped: `object`'s __wrapped__ from its own dict, where
// functools.wraps puts it (a dict lookup by a str key runs none of the
// program's code; an attribute lookup could, through a __getattr__).
// Borrowed from *dict, a new reference (or null) the caller releases.
PyObject* OwnWrapped(PyObject* object, PyObject** dict) {
  *dict = g_api.generic_get_dict != nullptr ? g_api.generic_get_dict(object, nullptr) : nullptr;
  PyObject* wrapped = nullptr;
  if (*dict != nullptr) {
    wrapped = g_wrapped_key != nullptr ? g_api.dict_get_item(*dict, g_wrapped_key)
                                       : g_api.dict_get_item_string(*dict, "__wrapped__");
  }
  g_api.err_clear();
  return wrapped;
}

// FunctionCode: a Python function's code, and its globals, as
// LookUpCodeObject wants them. Read directly where the API allows
// (borrowed, held by the function), else as attributes (new references,
// released here: the function holds them meanwhile).
CodeInfo* FunctionCode(PyObject* function) {
  if (g_api.function_get_code != nullptr && g_api.function_get_globals != nullptr) {
    PyObject* code = g_api.function_get_code(function);
    PyObject* globals = g_api.function_get_globals(function);
    return code != nullptr ? LookUpCodeObject(code, [&] { return globals; }) : nullptr;
  }
  CodeInfo* found = nullptr;
  PyObject* code = g_api.get_attr_string(function, "__code__");
  PyObject* globals = g_api.get_attr_string(function, "__globals__");
  if (code != nullptr) found = LookUpCodeObject(code, [&] { return globals; });
  if (code != nullptr) g_api.dec_ref(code);
  if (globals != nullptr) g_api.dec_ref(globals);
  g_api.err_clear();
  return found;
}

// WrappedCode: the info of the Python function `callable` wraps, or null.
// A wrapped function may itself wrap another (functools.wraps again):
// flax's Module.apply under its traceback filter, jitted as a bound method
// (`q_network.apply = jax.jit(q_network.apply)`). The chain is followed to
// the first function a rule names, else the outermost function is the one
// whose computation is noted (NoteTracedOperation).
CodeInfo* WrappedCode(PyObject* callable) {
  if (!InstancesHaveDicts(TypeOf(callable))) return nullptr;
  const size_t slot = (reinterpret_cast<uintptr_t>(callable) >> 4) % kUnwrappedSlots;
  if (g_unwrapped[slot] == callable) return nullptr;
  PyObject* link_dict = nullptr;  // Holds `wrapped`.
  PyObject* wrapped = OwnWrapped(callable, &link_dict);
  CodeInfo* info = nullptr;
  bool wraps_a_function = false;
  for (int depth = 0; depth < kMaxWrappedChain && wrapped != nullptr; ++depth) {
    PyObject* function = TypeOf(wrapped) == g_api.method_type ? g_api.method_function(wrapped) : wrapped;
    if (function == nullptr || TypeOf(function) != g_api.function_type) break;
    wraps_a_function = true;
    CodeInfo* found = FunctionCode(function);
    if (info == nullptr || (found != nullptr && found->rule != kNoRule)) info = found;
    if (found != nullptr && found->rule != kNoRule) break;
    PyObject* next_dict = nullptr;
    PyObject* next = OwnWrapped(function, &next_dict);
    if (link_dict != nullptr) g_api.dec_ref(link_dict);  // `wrapped` and `function` are not used past here.
    link_dict = next_dict;
    wrapped = next;
  }
  if (!wraps_a_function) g_unwrapped[slot] = callable;
  if (link_dict != nullptr) g_api.dec_ref(link_dict);
  return info;  // Kept on the code object, which the wrapper keeps alive.
}

uint32_t g_backprop_id = 0;  // Interned "backprop" and "forward", set with the rules.
uint32_t g_forward_id = 0;

// WrappedOperation: the operation a call of the callable whose wrapped
// function is `code` (null: none) opens, or 0: backprop when its traced
// computation opened one (a gradient transform, an optimizer update),
// else the function's own rule, else a forward pass when its traced
// computation applied a module.
uint32_t WrappedOperation(const PythonThread* thread, const CodeInfo* code) {
  if (code == nullptr || !g_have_rules) return 0;
  if (code->computes_gradient) return g_backprop_id;
  if (code->rule == kNoRule) return code->computes_forward ? g_forward_id : 0;
  return Suppressed(thread, code) ? 0 : code->operation_id;
}

// WrappedCallable: WrappedCode for a callable that can wrap (not a
// builtin function or method descriptor).
CodeInfo* WrappedCallable(PyObject* callable) {
  const void* type = TypeOf(callable);
  if (type == g_api.cfunction_type || type == g_api.cmethod_type || type == g_api.method_descriptor_type) {
    return nullptr;
  }
  return g_have_rules ? WrappedCode(callable) : nullptr;
}

// NoteTracedOperation: `code` starts; if it opens backprop or a forward
// pass while wrapped calls are open (a jitted function being traced),
// their functions compute gradients or a forward pass.
void NoteTracedOperation(PythonThread* thread, const CodeInfo* code) {
  if (code == nullptr || code->rule == kNoRule || thread->call_depth == 0 || g_backprop_id == 0) return;
  const uint32_t operation_id = code->operation_id;
  if (operation_id != g_backprop_id && operation_id != g_forward_id) return;
  for (int i = 0; i < thread->call_depth; ++i) {
    if (CodeInfo* wrapped = thread->calls[i].wrapped; wrapped != nullptr) {
      (operation_id == g_backprop_id ? wrapped->computes_gradient : wrapped->computes_forward) = true;
    }
  }
}

// UserOffsetsNeedSite: whether a call site of `frame` must stay enabled
// for the user's line: only in the user's innermost frame, and only while
// that line may come from the latest call's offset (the frame's running
// instruction not yet checked, or found unreadable).
inline bool UserOffsetsNeedSite(const PythonThread* thread, FrameKey frame) {
  if (thread->user_depth == 0 || thread->user_frames[thread->user_depth - 1].frame != frame) return false;
  return !g_running_offsets || g_frame_objects || g_offset_checks < kOffsetChecks;
}

PyObject* MonitorCall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {  // code, offset, callable, arg0
  PythonHookSample sample;
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr || nargs < 3) return g_api.none;
  RestartIfCaptureReopened();
  const FrameKey frame = FrameKeyNow();
  // The call's offset, read once where it is needed (-1 until then).
  int offset = -1;
  // The user's line is the one of its frame's latest call.
  if (thread->user_depth > 0 && thread->user_frames[thread->user_depth - 1].frame == frame) {
    offset = OffsetOf(args[1]);
    thread->user_frames[thread->user_depth - 1].offset = offset;
    if (__builtin_expect(g_offset_checks < kOffsetChecks, 0) && g_running_offsets && !g_frame_objects) {
      CheckRunningOffset(frame, args[0], offset);
    }
  }
  PyObject* const callable = args[2];
  const void* const type = TypeOf(callable);
  const uintptr_t method_def = MethodDefOf(callable, type);
  // A builtin function or method descriptor: its site may be cached.
  SiteEntry* site = nullptr;
  NativeTarget target;
  if (method_def != 0) {
    if (offset < 0) offset = OffsetOf(args[1]);
    site = &thread->sites[SiteSlot(args[0], offset)];
  }
  const uint32_t epoch = g_code_epoch.load(std::memory_order_relaxed);
  const bool cached = site != nullptr && site->code == args[0] && site->offset == offset &&
                      site->callable == callable && site->method_def == method_def && site->epoch == epoch;
  if (cached) {
    target = {site->function, callable, true, site->wait};
  } else {
    bool python;
    const uintptr_t function = CallableFunction(callable, &python);
    if (python) {  // Its start, if watched, is counted apart.
      sample.set_part(HookPart::kCallPython);
      CountUnrecorded(wire::OverheadKind::kPythonCallSite);
      return UserOffsetsNeedSite(thread, frame) ? g_api.none : g_disable;
    }
    target = ResolveTarget(function, callable);
  }
  HookMark(HookStep::kCallable);
  const int depth = thread->call_depth, overflow = thread->call_overflow;
  const bool recorded = OnNativeCall(
      thread, frame, target, nullptr,
      [&](CallPlace* place) {
        if (cached) {
          *place = {site->code_id, site->line, site->user_code};
          return;
        }
        CodeInfo* code = LookUpCodeObject(args[0], RunningGlobals);
        if (code == nullptr) return;  // Not cached: a code object without info bumps no epoch when freed.
        if (offset < 0) offset = OffsetOf(args[1]);
        *place = {code->code_id, LineAt(code, args[0], offset), code->user_code};
        if (site != nullptr) {
          *site = {args[0], callable,       method_def,  target.function,  epoch,
                   offset,  place->code_id, place->line, place->user_code, target.wait};
        }
      },
      [&](CodeInfo** wrapped) {
        *wrapped = method_def != 0 ? nullptr : WrappedCallable(callable);
        return WrappedOperation(thread, *wrapped);
      });
  sample.set_part(recorded ? HookPart::kCallRecorded : HookPart::kCallBuiltin);
  if (!recorded) return g_disable;
  // Closed capture for a while, and nothing stored: the site waits for
  // the next window.
  if (__builtin_expect(!CaptureOpen(), 0) && g_restart_events != nullptr && g_disable != g_api.none &&
      thread->call_depth == depth && thread->call_overflow == overflow &&
      MonotonicNs() - CaptureGate::ClosedSinceNs() >= kDisableAfterClosedNs) {
    g_disabled_while_closed.store(true, std::memory_order_relaxed);
    return g_disable;
  }
  return g_api.none;
}

PyObject* MonitorNativeReturn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {  // code, offset, callable, arg0
  const PythonHookSample sample(HookPart::kNativeReturn);
  PythonThread* thread = CurrentPythonThread();
  if (thread == nullptr || nargs < 3) return g_api.none;
  OnNativeReturn(thread, FrameKeyNow(), args[2], [&] {
    bool python;
    return CallableFunction(args[2], &python);
  });
  return g_api.none;
}

// MonitorNothing: RLSCOPE_PYTHON_HOOK=noop's one callback for every event,
// a measuring aid: it records nothing and never disables, so a run with
// it, set beside one without the Python level (RLSCOPE_PYTHON_HOOK=off),
// shows what the interpreter's side of a callback costs in that program
// (passing the arguments, the instrumented instruction): the part of each
// callback the in-band sample does not time. Only the sample is kept.
PyObject* MonitorNothing(PyObject*, PyObject* const*, Py_ssize_t) {
  const PythonHookSample sample;
  CurrentPythonThread();  // As every callback does: the thread's buffer, for the sample.
  return g_api.none;
}

MethodDef g_monitor_nothing{"rlscope_nothing", &MonitorNothing, kMethFastcall, nullptr};
MethodDef g_monitor_start{"rlscope_py_start", &MonitorStart, kMethFastcall, nullptr};
MethodDef g_monitor_return{"rlscope_py_return", &MonitorReturn, kMethFastcall, nullptr};
MethodDef g_monitor_unwind{"rlscope_py_unwind", &MonitorUnwind, kMethFastcall, nullptr};
MethodDef g_monitor_throw{"rlscope_py_throw", &MonitorThrow, kMethFastcall, nullptr};
MethodDef g_monitor_call{"rlscope_call", &MonitorCall, kMethFastcall, nullptr};
MethodDef g_monitor_native_return{"rlscope_c_return", &MonitorNativeReturn, kMethFastcall, nullptr};

// MonitoringCallbacks: {event name: callback} for sitecustomize.py to
// register, or null (the profile function is used instead).
PyObject* MonitoringCallbacks() {
  if (g_api.cfunction_new == nullptr || g_api.dict_new == nullptr || g_api.dict_set_item_string == nullptr ||
      g_api.none == nullptr || g_api.function_type == nullptr || g_api.method_type == nullptr ||
      g_api.method_function == nullptr || g_api.type_get_slot == nullptr || g_api.type_get_flags == nullptr ||
      g_api.eval_get_globals == nullptr || g_api.long_as_long == nullptr) {
    return nullptr;
  }
  PyObject* callbacks = g_api.dict_new();
  if (callbacks == nullptr) return nullptr;
  const std::pair<const char*, MethodDef*> events[] = {
      {"PY_START", &g_monitor_start},   {"PY_RESUME", &g_monitor_start},        {"PY_THROW", &g_monitor_throw},
      {"PY_RETURN", &g_monitor_return}, {"PY_YIELD", &g_monitor_return},        {"PY_UNWIND", &g_monitor_unwind},
      {"CALL", &g_monitor_call},        {"C_RETURN", &g_monitor_native_return}, {"C_RAISE", &g_monitor_native_return}};
  const char* hook = getenv("RLSCOPE_PYTHON_HOOK");
  const bool nothing = hook != nullptr && strcmp(hook, "noop") == 0;
  if (nothing) {
    ReportProblem("python-noop",
                  "RLSCOPE_PYTHON_HOOK=noop: the Python hook's callbacks do nothing (a measuring aid), so no "
                  "Python call, operation or transition is recorded");
  }
  for (const auto& [event, definition] : events) {
    PyObject* callback = g_api.cfunction_new(nothing ? &g_monitor_nothing : definition, nullptr, nullptr);
    const bool stored = callback != nullptr && g_api.dict_set_item_string(callbacks, event, callback) == 0;
    if (callback != nullptr) g_api.dec_ref(callback);
    if (!stored) {
      g_api.err_clear();
      g_api.dec_ref(callbacks);
      return nullptr;
    }
  }
  return callbacks;
}

// --- Attaching ----------------------------------------------------------------

// Installing our own hook raises the same audit event as another tool
// replacing it; this thread-local tells them apart.
__thread bool t_installing_hook __attribute__((tls_model("initial-exec")));

// AuditHook: CPython audits every profile-function change ("sys.setprofile",
// also from cProfile and torch.profiler). One that is not ours means our
// hook is gone from this thread: record it so the report can say so.
int AuditHook(const char* event, PyObject*, void*) {
  // Under sys.monitoring another tool's profile function runs beside ours.
  if (!t_installing_hook && !g_monitoring && g_recording && t_python != nullptr &&
      strcmp(event, "sys.setprofile") == 0) {
    RecordInstant(wire::EventKind::kPythonHookReplaced, 0);
  }
  return 0;
}

void SetProfile() {
  t_installing_hook = true;
  g_api.set_profile(&ProfileHook, nullptr);
  t_installing_hook = false;
}

// OnForkChild: the child's only thread is the one that forked. It still
// runs Python, and the inferred operations it had open are open in the
// child too: say so on the child's own stream (the parent's records were
// discarded).
// PostPythonVersion: tells the report which interpreter ran (its
// calibrated Python costs are per MAJOR.MINOR version), once per process.
void PostPythonVersion() {
  using VersionFunction = const char* (*)();
  auto version = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  const char* text = version != nullptr ? version() : nullptr;
  if (text == nullptr) return;
  // "3.11.2 (main, ...) [GCC ...]": the version is the first word.
  const char* space = strchr(text, ' ');
  const size_t length = space != nullptr ? static_cast<size_t>(space - text) : strlen(text);
  CaptureNotices::Post("python", "captured", std::string_view(text, length));
}

void OnForkChild() {
  // The child's flusher posts its counts from 0: the parent's are not its own.
  g_stack_resets.store(0, std::memory_order_relaxed);
  g_entries_given_up.store(0, std::memory_order_relaxed);
  ResetPythonHookBreakdown();
  PythonThread* thread = t_python;
  if (thread == nullptr || !g_recording) return;
  PostPythonVersion();  // The child's stream is new: say again which Python runs.
  const uint64_t now = NowTicks();
  Record(wire::EventKind::kPythonThread, 0, now, now);
  for (int i = 0; i < thread->watched_depth; ++i) {
    if (thread->watched[i].operation_id != 0) {
      Record(wire::EventKind::kOperationPush, thread->watched[i].operation_id, now, now, 0, kInferredSource);
    }
  }
}

// BlockingFunction: the C function Python reaches as `path` in `module`
// (blocking_calls.h), or 0 if this Python has none. GIL held.
uintptr_t BlockingFunction(const BlockingCallable& callable) {
  PyObject* object = g_api.import_module(callable.module);
  std::string path = callable.path;
  size_t start = 0;
  while (object != nullptr && start <= path.size()) {
    const size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    start = dot == std::string::npos ? path.size() + 1 : dot + 1;
    const bool call = part.size() > 2 && part.compare(part.size() - 2, 2, "()") == 0;
    if (call) part.resize(part.size() - 2);
    PyObject* next = g_api.get_attr_string(object, part.c_str());
    g_api.dec_ref(object);
    object = next;
    if (call && object != nullptr) {
      next = g_api.call_object != nullptr ? g_api.call_object(object, nullptr) : nullptr;
      g_api.dec_ref(object);
      object = next;
    }
  }
  if (object == nullptr) {
    g_api.err_clear();  // Not in this Python: not recognised.
    return 0;
  }
  const uintptr_t function = NativeFunctionOf(object);
  g_api.dec_ref(object);
  return function;
}

// ResolveBlockingCalls: fills g_blocking, once per process, GIL held. It
// imports the few C modules of the list that are not loaded yet (select,
// _socket, _queue, _multiprocessing: standard-library C modules with no
// import-time effects beyond sys.modules), so that their functions are
// known before the program first calls them.
void ResolveBlockingCalls() {
  if (g_api.import_module == nullptr) return;  // Waits stay Python time.
  for (size_t i = 0; i < kBlockingCallableCount; ++i) {
    if (!g_blocking.Add(BlockingFunction(kBlockingCallables[i]))) break;
  }
}

bool ResolvePythonApi() {
  static bool tried = false;
  if (tried) return g_api.ok;
  tried = true;
  python::ResolvePythonApi(g_api);
  if (g_api.ok) {
    // Called with the GIL held (attach). One index for the whole process.
    g_api.extra_index = g_api.request_extra_index(&FreeCodeInfo);
    g_api.ok = g_api.extra_index >= 0;
    pthread_key_create(&g_python_thread_key, &ReleasePythonThread);
    // Registered after the runtime's handler: runs after it in the child.
    pthread_atfork(nullptr, nullptr, &OnForkChild);
    if (g_api.add_audit_hook != nullptr && g_api.add_audit_hook(&AuditHook, nullptr) != 0) g_api.err_clear();
    ResolveBlockingCalls();
  }
  if (!g_api.ok) {
    ReportProblem("python-api", "this Python lacks parts of the C API rlscope needs; Python-level capture is off");
  }
  return g_api.ok;
}

void LoadRules() {
  if (g_rules != nullptr) return;
  g_rules = new std::vector<CompiledRule>();
  g_rule_list = new std::vector<OperationRule>();
  RuleSet rules;
  for (const std::string& file : RuleFilesFromEnvironment()) {
    std::string error;
    if (!LoadRuleFile(file, rules, &error)) {
      ReportProblem("rules", "%s; operations are inferred with the rules read before it", error.c_str());
      break;
    }
  }
  *g_rule_list = rules.operations;
  g_class_attributes = new std::vector<std::string>(ClassAttributesAskedFor(rules.operations));
  for (OperationRule& rule : rules.operations) {
    CompiledRule compiled{std::move(rule), 0, {}};
    compiled.operation_id = StringTable::Intern(compiled.rule.operation);
    for (const std::string& unless : compiled.rule.unless_inside) {
      compiled.unless_ids.push_back(StringTable::Intern(unless));
    }
    g_rules->push_back(std::move(compiled));
  }
  g_have_rules = !g_rules->empty();
  g_backprop_id = StringTable::Intern("backprop");
  g_forward_id = StringTable::Intern("forward");  // report/operation_inference.h's kForwardCandidate.
}

}  // namespace

bool ThreadRunsPython() { return t_python != nullptr; }

uint64_t PythonStackResets() { return g_stack_resets.load(std::memory_order_relaxed); }

uint64_t PythonEntriesGivenUp() { return g_entries_given_up.load(std::memory_order_relaxed); }

int AttachPythonAllThreads(const char* name) {
  if (!g_recording || !ResolvePythonApi()) return 0;
  g_monitoring = false;  // Also after a sys.monitoring attach that did not go through.
  LoadRules();
  PostPythonVersion();
  t_installing_hook = true;
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
  t_installing_hook = false;
  CurrentPythonThread();  // Marks the attaching thread as a Python thread now.
  if (name != nullptr) NameCurrentThread(name);
  return 1;
}

int AttachPythonCurrentThread(const char* name) {
  if (!g_recording || !ResolvePythonApi()) return 0;
  if (!g_monitoring) SetProfile();  // sys.monitoring covers every thread already.
  CurrentPythonThread();
  if (name != nullptr) NameCurrentThread(name);
  return 1;
}

// PrepareMonitoring: the sys.monitoring callbacks to register, or null
// when this process is to use the profile function.
PyObject* PrepareMonitoring(const char* name, const char* holder, PyObject* disable, PyObject* restart_events) {
  if (!g_recording || !ResolvePythonApi()) return nullptr;
  const int minor = g_api.minor;  // 0 where Py_GetVersion is missing or not 3.x.
  if (minor < 12) return nullptr;
  if (holder != nullptr) {
    ReportProblem("python-monitor",
                  "the sys.monitoring tool ids rlscope can take are held (by %s): Python is "
                  "captured with the profile function instead (slower on this Python, and blind to calls of "
                  "callables other than builtins, such as jitted JAX functions)",
                  holder);
    return nullptr;
  }
  if (!DiscoverFrameLayout(minor)) return nullptr;
  const char* disabling = getenv("RLSCOPE_PYTHON_DISABLE");
  g_disable = disable != nullptr && (disabling == nullptr || strcmp(disabling, "0") != 0) ? disable : g_api.none;
  // Kept for the process's life: a reference of our own, so that a
  // program rebinding sys.monitoring.restart_events cannot free it.
  g_restart_events = restart_events != nullptr && restart_events != g_api.none && g_api.inc_ref != nullptr &&
                             g_api.add_pending_call != nullptr
                         ? restart_events
                         : nullptr;
  if (g_restart_events != nullptr) {
    g_api.inc_ref(g_restart_events);
    CaptureGate::SetOpenListener(&OnCaptureOpened);
  }
  PyObject* callbacks = MonitoringCallbacks();
  if (callbacks == nullptr) return nullptr;
  if (g_api.dict_get_item != nullptr && g_api.unicode_intern_from_string != nullptr && g_wrapped_key == nullptr) {
    g_wrapped_key = g_api.unicode_intern_from_string("__wrapped__");  // Ours for the process's life.
    g_api.err_clear();
  }
  LoadRules();
  PostPythonVersion();
  g_monitoring = true;
  CurrentPythonThread();  // Marks the attaching thread as a Python thread now.
  if (name != nullptr) NameCurrentThread(name);
  return callbacks;
}

}  // namespace rlscope::preload

// Entry points for sitecustomize.py (called through ctypes.PyDLL, GIL held).
// `thread_name`: Python's name of the calling thread (threading), or null.
extern "C" __attribute__((visibility("default"))) int rlscope_python_attach(const char* thread_name) {
  return rlscope::preload::AttachPythonAllThreads(thread_name);
}

// sys.monitoring (3.12+): the callbacks to register, as a new reference to
// {event name: callable}, or None when this Python is to be captured with
// the profile function (rlscope_python_attach) instead. `holder`: the names
// of the tools that hold the ids rlscope can take, or null when one is free.
// `disable`: sys.monitoring.DISABLE, `restart_events`:
// sys.monitoring.restart_events (both borrowed: the module keeps them).
extern "C" __attribute__((visibility("default"))) void* rlscope_python_monitoring_prepare(const char* thread_name,
                                                                                          const char* holder,
                                                                                          void* disable,
                                                                                          void* restart_events) {
  // ctypes' py_object takes a reference of its own: the dict's is kept (it
  // lives as long as the process anyway), None is immortal.
  void* callbacks =
      rlscope::preload::PrepareMonitoring(thread_name, holder, static_cast<rlscope::preload::PyObject*>(disable),
                                          static_cast<rlscope::preload::PyObject*>(restart_events));
  return callbacks != nullptr ? callbacks : static_cast<void*>(rlscope::preload::g_api.none);
}

extern "C" __attribute__((visibility("default"))) int rlscope_python_attach_thread(const char* thread_name) {
  return rlscope::preload::AttachPythonCurrentThread(thread_name);
}
