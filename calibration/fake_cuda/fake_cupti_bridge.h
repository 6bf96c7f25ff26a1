// The interface between the fake libcudart.so.13 (the "driver": API calls,
// the GPU's virtual timeline) and the fake libcupti.so.13 (subscriber,
// callback enables, activity buffers), both GPU-less test stand-ins.
//
// The profiler may dlopen the fake CUPTI RTLD_LOCAL, so the fake runtime
// cannot look it up. Instead the fake CUPTI's constructor finds
// rlscope_fake_cudart_attach_cupti with dlsym(RTLD_DEFAULT) (the fake
// runtime is a global DT_NEEDED library of the test programs) and hands
// over this table; its destructor detaches (null). Without the fake runtime
// in the process the fake CUPTI works but sees no API calls.
#ifndef RLSCOPE_TEST_FAKE_CUDA_FAKE_CUPTI_BRIDGE_H_
#define RLSCOPE_TEST_FAKE_CUDA_FAKE_CUPTI_BRIDGE_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>

// Bumped on any change of the table; a mismatch is refused (no callbacks).
#define RLSCOPE_FAKE_CUPTI_BRIDGE_VERSION 2

extern "C" {

struct RlscopeFakeCuptiBridge {
  uint32_t version;  // RLSCOPE_FAKE_CUPTI_BRIDGE_VERSION
  // Delivers an API callback to the subscriber when it enabled
  // (domain, cbid); nothing otherwise. Called without any fake lock held.
  void (*api_callback)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  // Whether records of `kind` are being collected.
  int (*activity_enabled)(CUpti_ActivityKind kind);
  // CUPTI's clock: the registered timestamp callback, else CLOCK_REALTIME.
  uint64_t (*timestamp)(void);
  // Copies one complete record (`size` bytes, a real CUpti_Activity* struct)
  // into the current activity buffer, requesting and completing buffers as
  // needed. 1 when stored, 0 when dropped (no buffer).
  int (*emit_record)(const CUpti_Activity* record, size_t size);
  // Whether the subscriber enabled callbacks of (domain, cbid): a runtime
  // call's GPU records carry its own correlation id if so, else its nested
  // driver call's, as NVIDIA's do.
  int (*api_callback_enabled)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
};

// Exported by the fake libcudart.so.13. Null detaches.
void rlscope_fake_cudart_attach_cupti(const RlscopeFakeCuptiBridge* bridge);
}

#endif  // RLSCOPE_TEST_FAKE_CUDA_FAKE_CUPTI_BRIDGE_H_
