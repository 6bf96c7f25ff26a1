#include "preload/real_symbol.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "preload/loader_gate.h"

namespace rlscope::preload {

namespace {

// The preload's own load address, to skip our own definitions.
void* PreloadBase() {
  static void* base = [] {
    Dl_info self{};
    return dladdr(reinterpret_cast<void*>(&PreloadBase), &self) != 0 ? self.dli_fbase : nullptr;
  }();
  return base;
}

bool IsInsidePreload(void* address) {
  Dl_info other{};
  return dladdr(address, &other) != 0 && other.dli_fbase == PreloadBase();
}

void* LookUp(void* handle, const char* name, const char* version) {
  void* symbol = version != nullptr ? dlvsym(handle, name, version) : nullptr;
  if (symbol == nullptr) symbol = dlsym(handle, name);
  return symbol;
}

// Paths of loaded objects whose name contains a hint. Filled inside
// dl_iterate_phdr's callback, which holds the loader's lock: the callback
// only copies names, and every dlopen/dlsym happens after it returns
// (calling them inside deadlocks against a concurrent dlopen).
struct Candidates {
  static constexpr int kMax = 8;
  const char* hint;
  char paths[kMax][512];
  int count = 0;
};

int CollectCandidate(dl_phdr_info* info, size_t, void* data) {
  auto* candidates = static_cast<Candidates*>(data);
  if (info->dlpi_name == nullptr || strstr(info->dlpi_name, candidates->hint) == nullptr) return 0;
  if (strlen(info->dlpi_name) >= sizeof(candidates->paths[0])) return 0;
  strcpy(candidates->paths[candidates->count++], info->dlpi_name);
  return candidates->count == Candidates::kMax ? 1 : 0;
}

}  // namespace

void* ResolveNextSymbol(const char* name, const char* version, const char* library_hint) {
  PreloadBase();  // Computed before any search, outside loader callbacks.
  void* symbol = LookUp(RTLD_NEXT, name, version);
  if (symbol != nullptr && !IsInsidePreload(symbol)) return symbol;
  if (library_hint == nullptr) return nullptr;
  Candidates candidates;
  candidates.hint = library_hint;
  IterateLoadedObjects(&CollectCandidate, &candidates);
  for (int i = 0; i < candidates.count; ++i) {
    // RTLD_NOLOAD: only a handle to what is already there; never loads.
    void* handle = dlopen(candidates.paths[i], RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    symbol = LookUp(handle, name, version);
    dlclose(handle);  // Drops only the reference NOLOAD took.
    if (symbol != nullptr && !IsInsidePreload(symbol)) return symbol;
  }
  return nullptr;
}

}  // namespace rlscope::preload
