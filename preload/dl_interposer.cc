// Route functions and wrappers behind the exported dlopen/dlsym/dlvsym
// (dl_interposer_x86_64.S). A route function returns the function the
// export jumps to: the real one (the caller's return address intact), or a
// wrapper here that calls the real one and post-processes.
#include "preload/dl_interposer.h"

#include <dlfcn.h>
#include <link.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "preload/elf_image.h"
#include "preload/loader_gate.h"
#include "preload/raw_log.h"
#include "preload/simulator_hooks.h"

namespace rlscope::preload {

namespace {

bool InsideThisObject(const ElfImage& image) { return image.Contains(reinterpret_cast<uintptr_t>(&RealDl)); }

// Finds the real definitions inside dl_iterate_phdr's callback: only
// memory reads, no dl* call (those would deadlock against a concurrent
// dlopen, and dlsym is ours anyway).
struct RealSearch {
  bool after_self = false;
  RealDlFunctions after{};     // First definitions after the preload (RTLD_NEXT's view).
  RealDlFunctions anywhere{};  // Fallback: first outside the preload.
};

template <typename Function>
void Take(const ElfImage& image, const char* name, Function& after, Function& anywhere, bool after_self) {
  const uintptr_t address = image.Definition(name);
  if (address == 0) return;
  if (after_self && after == nullptr) after = reinterpret_cast<Function>(address);
  if (anywhere == nullptr) anywhere = reinterpret_cast<Function>(address);
}

int SearchReal(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<RealSearch*>(data);
  const ElfImage image(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_name);
  if (InsideThisObject(image)) {
    search->after_self = true;
    return 0;
  }
  Take(image, "dlopen", search->after.dlopen, search->anywhere.dlopen, search->after_self);
  Take(image, "dlsym", search->after.dlsym, search->anywhere.dlsym, search->after_self);
  Take(image, "dlvsym", search->after.dlvsym, search->anywhere.dlvsym, search->after_self);
  return 0;
}

struct PreloadSpan {
  uintptr_t low = UINTPTR_MAX;
  uintptr_t high = 0;
};

int FindPreloadSpan(dl_phdr_info* info, size_t, void* data) {
  const ElfImage image(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_name);
  if (!InsideThisObject(image)) return 0;
  auto* span = static_cast<PreloadSpan*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
    const uintptr_t begin = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    if (begin < span->low) span->low = begin;
    if (begin + info->dlpi_phdr[i].p_memsz > span->high) span->high = begin + info->dlpi_phdr[i].p_memsz;
  }
  return 1;
}

bool IsPreloadAddress(const void* address) {
  static const PreloadSpan span = [] {
    PreloadSpan found;
    IterateLoadedObjects(&FindPreloadSpan, &found);
    return found;
  }();
  const auto value = reinterpret_cast<uintptr_t>(address);
  return value >= span.low && value < span.high;
}

// Whether a dlopen of `file` from `caller` can find something else than the
// same dlopen from the preload would. glibc consults the caller only for a
// name with '$' (DSTs such as $ORIGIN) or without '/' (a search). A search
// uses the caller's DT_RUNPATH if it has one, else the DT_RPATHs of the
// caller and of the objects that loaded it, then the program's DT_RPATH.
// From the preload (no RUNPATH, no RPATH, loaded by the program) only the
// program's DT_RPATH applies. So the caller does not matter when it has no
// DT_RUNPATH and no loaded library has a DT_RPATH.
struct SearchScope {
  uintptr_t caller;
  bool self_has_search_path = false;  // Breaks the premise above: never true as built.
  bool caller_found = false;
  bool caller_has_runpath = false;
  bool program_has_runpath = false;
  bool library_has_rpath = false;
  bool first = true;
};

int InspectSearchScope(dl_phdr_info* info, size_t, void* data) {
  auto* scope = static_cast<SearchScope*>(data);
  const ElfImage image(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_name);
  if (scope->first) {
    scope->program_has_runpath = image.HasRunpath();
  } else if (image.HasRpath()) {
    scope->library_has_rpath = true;
  }
  scope->first = false;
  if (InsideThisObject(image)) scope->self_has_search_path = image.HasRunpath() || image.HasRpath();
  if (image.Contains(scope->caller)) {
    scope->caller_found = true;
    scope->caller_has_runpath = image.HasRunpath();
  }
  return 0;
}

bool CallerMatters(const char* file, const void* caller) {
  if (file == nullptr) return false;  // The program's handle.
  if (strchr(file, '$') != nullptr) return true;
  if (strchr(file, '/') != nullptr) return false;
  SearchScope scope{reinterpret_cast<uintptr_t>(caller)};
  IterateLoadedObjects(&InspectSearchScope, &scope);
  // An unknown caller (JIT code) counts as the program, as in glibc.
  const bool runpath = scope.caller_found ? scope.caller_has_runpath : scope.program_has_runpath;
  return runpath || scope.library_has_rpath || scope.self_has_search_path;
}

// dlsym(RTLD_DEFAULT) searches the caller's scope: the global scope, then,
// for a library loaded RTLD_LOCAL, its own dependencies. Called from here
// it would search the preload's (the global scope only), so a miss is
// retried in the caller's local scope: glibc accepts a link_map as handle.
void* LookUpDefault(const void* caller, const char* name, const char* version) {
  const RealDlFunctions& real = RealDl();
  void* address = version != nullptr ? real.dlvsym(RTLD_DEFAULT, name, version) : real.dlsym(RTLD_DEFAULT, name);
  if (address != nullptr) return address;
  Dl_info info{};
  link_map* caller_map = nullptr;
  if (dladdr1(caller, &info, reinterpret_cast<void**>(&caller_map), RTLD_DL_LINKMAP) == 0 || caller_map == nullptr) {
    return nullptr;
  }
  return version != nullptr ? real.dlvsym(caller_map, name, version) : real.dlsym(caller_map, name);
}

}  // namespace

const RealDlFunctions& RealDl() {
  static const RealDlFunctions real = [] {
    RealSearch search;
    IterateLoadedObjects(&SearchReal, &search);
    RealDlFunctions found{search.after.dlopen ? search.after.dlopen : search.anywhere.dlopen,
                          search.after.dlsym ? search.after.dlsym : search.anywhere.dlsym,
                          search.after.dlvsym ? search.after.dlvsym : search.anywhere.dlvsym};
    if (found.dlopen == nullptr || found.dlsym == nullptr || found.dlvsym == nullptr) {
      RawLog("cannot find the C library's dlopen/dlsym/dlvsym behind the preload's; aborting");
      abort();
    }
    return found;
  }();
  return real;
}

}  // namespace rlscope::preload

using rlscope::preload::RealDl;
using rlscope::preload::SimulatorHooks;

#define RLSCOPE_HIDDEN extern "C" __attribute__((visibility("hidden")))

// The wrappers: entered by a jump from the export, so their return address
// is the original caller's.
RLSCOPE_HIDDEN void* rlscope_dlopen_wrapper(const char* file, int mode) {
  void* handle = RealDl().dlopen(file, mode);
  if (handle != nullptr) {
    const int saved_errno = errno;
    SimulatorHooks::Refresh();  // Patch what this dlopen brought in.
    errno = saved_errno;
  }
  return handle;
}

RLSCOPE_HIDDEN void* rlscope_dlsym_wrapper(void* handle, const char* name) {
  const void* caller = __builtin_return_address(0);
  SimulatorHooks::Refresh();  // A library loaded through a pass-through dlopen.
  void* address =
      handle == RTLD_DEFAULT ? rlscope::preload::LookUpDefault(caller, name, nullptr) : RealDl().dlsym(handle, name);
  return SimulatorHooks::ForLookup(address, name);
}

RLSCOPE_HIDDEN void* rlscope_dlvsym_wrapper(void* handle, const char* name, const char* version) {
  const void* caller = __builtin_return_address(0);
  SimulatorHooks::Refresh();
  void* address = handle == RTLD_DEFAULT ? rlscope::preload::LookUpDefault(caller, name, version)
                                         : RealDl().dlvsym(handle, name, version);
  return SimulatorHooks::ForLookup(address, name);
}

// The route functions, called by the exports with the arguments and the
// caller's return address.
RLSCOPE_HIDDEN void* rlscope_route_dlopen(const char* file, int, const void* caller) {
  using namespace rlscope::preload;
  if (!SimulatorHooks::Installed() || IsPreloadAddress(caller)) return reinterpret_cast<void*>(RealDl().dlopen);
  if (CallerMatters(file, caller)) {
    // The real dlopen must see the caller. What it loads is patched at the
    // next dlopen/dlsym through us; catch up on earlier loads now.
    SimulatorHooks::Refresh();
    return reinterpret_cast<void*>(RealDl().dlopen);
  }
  return reinterpret_cast<void*>(&rlscope_dlopen_wrapper);
}

RLSCOPE_HIDDEN void* rlscope_route_dlsym(void* handle, const char* name, const void* caller) {
  using namespace rlscope::preload;
  // RTLD_NEXT depends on the caller and is how interposers find what they
  // wrap: never substituted.
  if (handle == RTLD_NEXT || !SimulatorHooks::NameMayBeHooked(name) || IsPreloadAddress(caller)) {
    return reinterpret_cast<void*>(RealDl().dlsym);
  }
  return reinterpret_cast<void*>(&rlscope_dlsym_wrapper);
}

RLSCOPE_HIDDEN void* rlscope_route_dlvsym(void* handle, const char* name, const char*, const void* caller) {
  using namespace rlscope::preload;
  if (handle == RTLD_NEXT || !SimulatorHooks::NameMayBeHooked(name) || IsPreloadAddress(caller)) {
    return reinterpret_cast<void*>(RealDl().dlvsym);
  }
  return reinterpret_cast<void*>(&rlscope_dlvsym_wrapper);
}
