// CUDA runtime interposer: a recording wrapper for every entry point in
// cuda_runtime_api_list.h. Each call becomes one kCudaApi interval.
#ifndef RLSCOPE_PRELOAD_CUDA_RUNTIME_HOOKS_H_
#define RLSCOPE_PRELOAD_CUDA_RUNTIME_HOOKS_H_

namespace rlscope::preload {

// InternCudaApiNames: interns every API name once, at start-up, so the hot
// path records a precomputed id.
void InternCudaApiNames();

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CUDA_RUNTIME_HOOKS_H_
