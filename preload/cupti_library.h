// CuptiLibrary: NVIDIA's CUPTI, dlopen'ed at run time (never linked: the
// preload must load in programs and on machines without CUDA) with the
// handful of entry points rlscope uses resolved once.
#ifndef RLSCOPE_PRELOAD_CUPTI_LIBRARY_H_
#define RLSCOPE_PRELOAD_CUPTI_LIBRARY_H_

#include <cupti.h>

#include <cstddef>

namespace rlscope::preload {

struct CuptiLibrary {
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**);
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**);
  CUptiResult (*ActivityFlushAll)(uint32_t);
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*);
  CUptiResult (*GetResultString)(CUptiResult, const char**);
  CUptiResult (*GetTimestamp)(uint64_t*);
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
  // Optional (older CUPTI lacks it): null when absent.
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);

  // The file that was loaded (for the report), e.g. "/usr/local/cuda/lib64/libcupti.so.13".
  char path[512];

  // ErrorText: CUPTI's own description of `result`, or its number.
  const char* ErrorText(CUptiResult result) const;
};

// LoadCuptiLibrary: with `explicit_path` (from `rlscope run --cupti`), that
// file only. Otherwise a libcupti.so.13 already in the process (torch links
// one), then the loader's search path, then the usual toolkit directories
// ($CUDA_HOME, /usr/local/cuda). False with a user-facing reason in `why`.
bool LoadCuptiLibrary(const char* explicit_path, CuptiLibrary* library, char* why, size_t why_size);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CUPTI_LIBRARY_H_
