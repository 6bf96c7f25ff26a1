#include "preload/cupti_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rlscope::preload {

namespace {

constexpr const char* kSoname = "libcupti.so.13";

// Where CUDA 13 toolkits put CUPTI, relative to a toolkit root.
constexpr const char* kToolkitSubdirs[] = {"extras/CUPTI/lib64", "lib64", "targets/x86_64-linux/lib",
                                           "targets/sbsa-linux/lib"};

template <typename Function>
bool Resolve(void* handle, const char* name, Function* function, char* why, size_t why_size) {
  *function = reinterpret_cast<Function>(dlsym(handle, name));
  if (*function != nullptr) return true;
  snprintf(why, why_size, "the CUPTI library lacks %s (CUDA 13's CUPTI is needed)", name);
  return false;
}

void* OpenCandidate(const char* path, CuptiLibrary* library) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  // The file the loader actually mapped, for the report.
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0]) {
    snprintf(library->path, sizeof(library->path), "%s", map->l_name);
  } else {
    snprintf(library->path, sizeof(library->path), "%s", path);
  }
  return handle;
}

void* FindCupti(CuptiLibrary* library, char* why, size_t why_size) {
  // Already loaded by the program (torch's libtorch_cuda needs it): use
  // that copy, never a second one.
  if (void* loaded = dlopen(kSoname, RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(loaded);
    return OpenCandidate(kSoname, library);
  }
  if (void* handle = OpenCandidate(kSoname, library)) return handle;
  const char* roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (const char* root : roots) {
    if (root == nullptr || root[0] == '\0') continue;
    for (const char* subdir : kToolkitSubdirs) {
      char path[512];
      snprintf(path, sizeof(path), "%s/%s/%s", root, subdir, kSoname);
      if (void* handle = OpenCandidate(path, library)) return handle;
    }
  }
  snprintf(why, why_size,
           "%s was not found (searched the loader path, $CUDA_HOME, $CUDA_PATH and /usr/local/cuda); "
           "point rlscope run --cupti at it",
           kSoname);
  return nullptr;
}

}  // namespace

const char* CuptiLibrary::ErrorText(CUptiResult result) const {
  const char* text = nullptr;
  if (GetResultString != nullptr && GetResultString(result, &text) == CUPTI_SUCCESS && text != nullptr) return text;
  static thread_local char number[32];
  snprintf(number, sizeof(number), "CUPTI error %d", static_cast<int>(result));
  return number;
}

bool LoadCuptiLibrary(const char* explicit_path, CuptiLibrary* library, char* why, size_t why_size) {
  *library = CuptiLibrary{};
  void* handle = nullptr;
  if (explicit_path != nullptr && explicit_path[0] != '\0') {
    handle = OpenCandidate(explicit_path, library);
    if (handle == nullptr) {
      snprintf(why, why_size, "cannot load the CUPTI library %s given with --cupti: %s", explicit_path, dlerror());
      return false;
    }
  } else {
    handle = FindCupti(library, why, why_size);
    if (handle == nullptr) return false;
  }
  const bool complete =
      Resolve(handle, "cuptiSubscribe", &library->Subscribe, why, why_size) &&
      Resolve(handle, "cuptiUnsubscribe", &library->Unsubscribe, why, why_size) &&
      Resolve(handle, "cuptiEnableCallback", &library->EnableCallback, why, why_size) &&
      Resolve(handle, "cuptiGetCallbackName", &library->GetCallbackName, why, why_size) &&
      Resolve(handle, "cuptiActivityEnable", &library->ActivityEnable, why, why_size) &&
      Resolve(handle, "cuptiActivityRegisterCallbacks", &library->ActivityRegisterCallbacks, why, why_size) &&
      Resolve(handle, "cuptiActivityGetNextRecord", &library->ActivityGetNextRecord, why, why_size) &&
      Resolve(handle, "cuptiActivityFlushAll", &library->ActivityFlushAll, why, why_size) &&
      Resolve(handle, "cuptiActivityGetNumDroppedRecords", &library->ActivityGetNumDroppedRecords, why, why_size) &&
      Resolve(handle, "cuptiGetResultString", &library->GetResultString, why, why_size) &&
      Resolve(handle, "cuptiGetTimestamp", &library->GetTimestamp, why, why_size) &&
      Resolve(handle, "cuptiSetThreadIdType", &library->SetThreadIdType, why, why_size);
  if (!complete) return false;  // The handle stays open: harmless, and CUPTI dislikes unloading.
  library->ActivityRegisterTimestampCallback = reinterpret_cast<decltype(library->ActivityRegisterTimestampCallback)>(
      dlsym(handle, "cuptiActivityRegisterTimestampCallback"));
  return true;
}

}  // namespace rlscope::preload
