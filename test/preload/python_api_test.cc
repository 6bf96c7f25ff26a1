// The Python hook's ABI layer (preload/python_api.h) through a fake ABI:
// objects laid out as CPython lays them out (python_abi.h), made of words,
// and fake C API functions, so what the layer reads is checked without an
// interpreter.
#include "preload/python_api.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

using namespace rlscope::preload::python;

namespace {

// A fake object: [refcount, type, ...fields], word-addressed.
struct FakeObject {
  uintptr_t words[16] = {};
  explicit FakeObject(const void* type) { words[1] = reinterpret_cast<uintptr_t>(type); }
  PyObject* object() { return reinterpret_cast<PyObject*>(words); }
  void Set(size_t byte_offset, uintptr_t value) { words[byte_offset / sizeof(uintptr_t)] = value; }
};

// Type objects: only their addresses matter, but for the vectorcall offset.
uintptr_t g_cfunction_type[16], g_method_descriptor_type[16], g_function_type[16], g_method_type[16];
uintptr_t g_vectorcall_type[16], g_plain_type[16];

unsigned long FakeTypeFlags(const void* type) {
  return type == g_vectorcall_type ? static_cast<unsigned long>(RLSCOPE_PY_TPFLAGS_HAVE_VECTORCALL) : 0;
}
void* FakeTypeSlot(const void*, int slot) {
  return slot == RLSCOPE_PY_TP_CALL_SLOT ? reinterpret_cast<void*>(uintptr_t{0x7a11}) : nullptr;
}
PyObject* g_method_target = nullptr;
PyObject* FakeMethodFunction(PyObject*) { return g_method_target; }

void UseFakeApi() {
  g_api = PythonApi();
  g_api.cfunction_type = g_cfunction_type;
  g_api.method_descriptor_type = g_method_descriptor_type;
  g_api.function_type = g_function_type;
  g_api.method_type = g_method_type;
  g_api.type_get_flags = &FakeTypeFlags;
  g_api.type_get_slot = &FakeTypeSlot;
  g_api.method_function = &FakeMethodFunction;
}

// A PyMethodDef whose ml_meth is `function`.
struct FakeMethodDef {
  const char* name = "f";
  uintptr_t function;
};

}  // namespace

TEST_CASE("a builtin's and a method descriptor's C function are read from their PyMethodDef", "[python_api]") {
  UseFakeApi();
  FakeMethodDef def{"len", 0x1234};
  FakeObject builtin(g_cfunction_type);
  builtin.Set(RLSCOPE_PY_CFUNCTION_METHOD_DEF_OFFSET, reinterpret_cast<uintptr_t>(&def));
  CHECK(NativeFunctionOf(builtin.object()) == 0x1234);
  FakeObject descriptor(g_method_descriptor_type);
  descriptor.Set(RLSCOPE_PY_METHOD_DESCR_METHOD_DEF_OFFSET, reinterpret_cast<uintptr_t>(&def));
  CHECK(NativeFunctionOf(descriptor.object()) == 0x1234);
  // Other types are never read as if they were these.
  FakeObject other(g_plain_type);
  other.Set(RLSCOPE_PY_CFUNCTION_METHOD_DEF_OFFSET, reinterpret_cast<uintptr_t>(&def));
  CHECK(NativeFunctionOf(other.object()) == 0);
  CHECK(NativeFunctionOf(nullptr) == 0);
  FakeObject empty(g_cfunction_type);  // No PyMethodDef.
  CHECK(NativeFunctionOf(empty.object()) == 0);
}

TEST_CASE("what a call of each kind of callable runs", "[python_api]") {
  UseFakeApi();
  bool python = false;
  FakeObject function(g_function_type);
  CHECK(CallableFunction(function.object(), &python) == 0);
  CHECK(python);  // Its PY_START follows.

  // A bound method of a Python function is Python; of a builtin, the builtin.
  FakeObject method(g_method_type);
  g_method_target = function.object();
  CHECK(CallableFunction(method.object(), &python) == 0);
  CHECK(python);
  FakeMethodDef def{"append", 0x5678};
  FakeObject builtin(g_cfunction_type);
  builtin.Set(RLSCOPE_PY_CFUNCTION_METHOD_DEF_OFFSET, reinterpret_cast<uintptr_t>(&def));
  g_method_target = builtin.object();
  CHECK(CallableFunction(method.object(), &python) == 0x5678);
  CHECK_FALSE(python);

  // An object of a vectorcall type (a ufunc, a jitted function): the
  // vectorcall function it carries at its type's offset.
  g_vectorcall_type[RLSCOPE_PY_TYPE_VECTORCALL_OFFSET / sizeof(uintptr_t)] = 48;
  FakeObject ufunc(g_vectorcall_type);
  ufunc.Set(48, 0x9abc);
  CHECK(CallableFunction(ufunc.object(), &python) == 0x9abc);
  CHECK_FALSE(python);
  // Without one there, and for a plain type: its tp_call.
  ufunc.Set(48, 0);
  CHECK(CallableFunction(ufunc.object(), &python) == 0x7a11);
  FakeObject instance(g_plain_type);
  CHECK(CallableFunction(instance.object(), &python) == 0x7a11);
  CHECK(CallableFunction(nullptr, &python) == 0);
}

namespace {

// A frame object whose interpreter frame (at its offset) holds the code at
// `code_offset`, and the API's PyFrame_GetCode for it.
PyObject* g_code_for_api = nullptr;
int g_api_calls = 0;
PyObject* FakeFrameGetCode(PyFrameObject*) {
  ++g_api_calls;
  return g_code_for_api;
}
void FakeDecRef(PyObject*) {}

struct FakeFrame {
  uintptr_t frame_object[8] = {};
  uintptr_t interpreter_frame[8] = {};
  FakeFrame(size_t code_offset, PyObject* code) {
    frame_object[RLSCOPE_PY_FRAME_INTERPRETER_FRAME_OFFSET / sizeof(uintptr_t)] =
        reinterpret_cast<uintptr_t>(interpreter_frame);
    interpreter_frame[code_offset / sizeof(uintptr_t)] = reinterpret_cast<uintptr_t>(code);
  }
  PyFrameObject* frame() { return reinterpret_cast<PyFrameObject*>(frame_object); }
};

void ResetCodeLayout() {
  g_layout_checks = 0;
  g_candidate_ok[0] = g_candidate_ok[1] = true;
  g_code_offset = -1;
  g_api_calls = 0;
  g_api.frame_get_code = &FakeFrameGetCode;
  g_api.dec_ref = &FakeDecRef;
}

}  // namespace

TEST_CASE("a frame's code is read directly once the API agreed with a layout every time", "[python_api]") {
  UseFakeApi();
  for (size_t offset : {size_t{32}, size_t{0}}) {  // 3.11's layout, then 3.12's.
    ResetCodeLayout();
    uintptr_t code_words[4] = {};
    auto* code = reinterpret_cast<PyObject*>(code_words);
    g_code_for_api = code;
    FakeFrame frame(offset, code);
    for (int i = 0; i < kLayoutChecks; ++i) REQUIRE(CodeOf(frame.frame()) == code);
    CHECK(g_code_offset == static_cast<int>(offset));
    CHECK(g_api_calls == kLayoutChecks);
    CHECK(CodeOf(frame.frame()) == code);
    CHECK(g_api_calls == kLayoutChecks);  // Read directly: no more API calls.
  }
}

TEST_CASE("a layout the API disagrees with once is never used", "[python_api]") {
  UseFakeApi();
  ResetCodeLayout();
  uintptr_t code_words[4] = {}, other_words[4] = {};
  auto* code = reinterpret_cast<PyObject*>(code_words);
  g_code_for_api = code;
  FakeFrame frame(32, code);
  FakeFrame misleading(32, reinterpret_cast<PyObject*>(other_words));  // Another layout, there by chance.
  REQUIRE(CodeOf(misleading.frame()) == code);                         // The API's answer, always.
  for (int i = 1; i < kLayoutChecks; ++i) CodeOf(frame.frame());
  CHECK(g_code_offset == -1);  // Neither candidate was right every time.
  CHECK(CodeOf(frame.frame()) == code);
  CHECK(g_api_calls == kLayoutChecks + 1);  // The API stays in use.
}

namespace {

uintptr_t g_tstate[40];
PyThreadState* FakeThreadStateGet() { return reinterpret_cast<PyThreadState*>(g_tstate); }
uintptr_t g_eval_frame[8];
PyFrameObject* FakeEvalGetFrame() { return reinterpret_cast<PyFrameObject*>(g_eval_frame); }

}  // namespace

TEST_CASE("the running frame is found in the thread state, 3.12's way and 3.13's", "[python_api]") {
  UseFakeApi();
  g_api.thread_state_get = &FakeThreadStateGet;
  g_api.eval_get_frame = &FakeEvalGetFrame;
  uintptr_t running[4] = {};  // The attaching frame's interpreter frame.
  std::memset(g_tstate, 0, sizeof(g_tstate));
  std::memset(g_eval_frame, 0, sizeof(g_eval_frame));
  g_eval_frame[RLSCOPE_PY_FRAME_INTERPRETER_FRAME_OFFSET / sizeof(uintptr_t)] = reinterpret_cast<uintptr_t>(running);
  g_frame_objects = false;

  SECTION("3.12: through tstate->cframe") {
    uintptr_t cframe[2] = {reinterpret_cast<uintptr_t>(running), 0};
    g_tstate[RLSCOPE_PY312_THREAD_CFRAME_OFFSET / sizeof(uintptr_t)] = reinterpret_cast<uintptr_t>(cframe);
    REQUIRE(DiscoverFrameLayout(12));
    CHECK(g_frame_layout.through_cframe);
    CHECK(FrameKeyNow() == running);
    uintptr_t next[4] = {};  // The interpreter moved on to another frame.
    cframe[0] = reinterpret_cast<uintptr_t>(next);
    CHECK(FrameKeyNow() == next);
  }
  SECTION("3.13: a field of the thread state") {
    g_tstate[72 / sizeof(uintptr_t)] = reinterpret_cast<uintptr_t>(running);
    REQUIRE(DiscoverFrameLayout(13));
    CHECK_FALSE(g_frame_layout.through_cframe);
    CHECK(g_frame_layout.tstate_offset == 72);
    CHECK(FrameKeyNow() == running);
  }
  SECTION("nowhere: not found, and frame objects tell frames apart") {
    CHECK_FALSE(DiscoverFrameLayout(13));
    g_frame_objects = true;
    CHECK(FrameKeyNow() == reinterpret_cast<const void*>(g_eval_frame));
    g_frame_objects = false;
  }
}
