#include "real_symbol.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace rlscope::preload {

namespace {

bool IsInsidePreload(void* address) {
  Dl_info self{}, other{};
  if (dladdr(reinterpret_cast<void*>(&IsInsidePreload), &self) == 0) return false;
  if (dladdr(address, &other) == 0) return false;
  return self.dli_fbase == other.dli_fbase;
}

void* LookUp(void* handle, const char* name, const char* version) {
  void* symbol = version != nullptr ? dlvsym(handle, name, version) : nullptr;
  if (symbol == nullptr) symbol = dlsym(handle, name);
  return symbol;
}

struct LoadedSearch {
  const char* name;
  const char* version;
  const char* library_hint;
  void* found;
};

int VisitLoadedObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<LoadedSearch*>(data);
  if (info->dlpi_name == nullptr || strstr(info->dlpi_name, search->library_hint) == nullptr) return 0;
  // RTLD_NOLOAD: only a handle to what is already there; never loads.
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  void* symbol = LookUp(handle, search->name, search->version);
  dlclose(handle);  // Drops only the reference NOLOAD took.
  if (symbol != nullptr && !IsInsidePreload(symbol)) {
    search->found = symbol;
    return 1;
  }
  return 0;
}

}  // namespace

void* ResolveNextSymbol(const char* name, const char* version, const char* library_hint) {
  void* symbol = LookUp(RTLD_NEXT, name, version);
  if (symbol != nullptr && !IsInsidePreload(symbol)) return symbol;
  if (library_hint == nullptr) return nullptr;
  LoadedSearch search{name, version, library_hint, nullptr};
  dl_iterate_phdr(&VisitLoadedObject, &search);
  return search.found;
}

}  // namespace rlscope::preload
