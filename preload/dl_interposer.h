// DlInterposer: the preload's dlopen, dlsym and dlvsym, which let
// SimulatorHooks see libraries loaded late and hand out trampolines to
// lookups (ctypes). The exported entry points are assembly
// (dl_interposer_x86_64.S): they ask a route function (below) where the
// call goes and *jump* there, so the real function runs with the caller's
// own return address on the stack. glibc reads that address to decide
//   - dlopen: whose DT_RUNPATH/DT_RPATH and $ORIGIN a bare name is searched
//     with, and the namespace;
//   - dlsym(RTLD_NEXT): the object after the caller;
//   - dlsym(RTLD_DEFAULT): the caller's scope (its RTLD_LOCAL dependencies).
// A C++ wrapper calling the real function would make every such call look
// like the preload's. Only calls we must post-process go through a wrapper,
// and only when the caller provably does not matter (see dl_interposer.cc).
//
// The real functions are found by reading the symbol tables of the objects
// loaded after the preload (ElfImage), never with dlsym/dlvsym, which are
// ours: no recursion, and nothing to resolve before the first call (other
// libraries' constructors run before the preload's and may call dlsym).
// The preload's own calls (real_symbol.cc) reach the real functions
// untouched: a caller inside the preload is always routed straight through.
#ifndef RLSCOPE_PRELOAD_DL_INTERPOSER_H_
#define RLSCOPE_PRELOAD_DL_INTERPOSER_H_

namespace rlscope::preload {

struct RealDlFunctions {
  void* (*dlopen)(const char* file, int mode);
  void* (*dlsym)(void* handle, const char* name);
  void* (*dlvsym)(void* handle, const char* name, const char* version);
};

// RealDl: the definitions the preload's exports hide (libc's since glibc
// 2.34, libdl's before). Aborts with a message if one is missing: nothing
// could work without them.
const RealDlFunctions& RealDl();

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_DL_INTERPOSER_H_
