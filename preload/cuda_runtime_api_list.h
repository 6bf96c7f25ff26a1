// The CUDA runtime entry points rlscope interposes, as one X-macro list:
//   X(name, (parameters), (arguments))
// Every entry returns cudaError_t. The preload defines a recording wrapper
// for each; the fake libcudart.so.13 used by the tests defines a busy-waiting
// stand-in for each, so both always cover the same set.
//
// Base names are declared by <cuda_runtime_api.h>, so a signature mismatch
// here is a compile error. The _ptsz/_ptds (per-thread default stream)
// variants are only declared by the header in per-thread mode; their
// signatures equal the base function's.
#ifndef RLSCOPE_PRELOAD_CUDA_RUNTIME_API_LIST_H_
#define RLSCOPE_PRELOAD_CUDA_RUNTIME_API_LIST_H_

#include <cuda_runtime_api.h>

// CUDA 13 <<<>>> launches call this (crt/device_functions.h), not
// cudaLaunchKernel.
#define RLSCOPE_LAUNCH_PARAMS \
  (cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream)
#define RLSCOPE_LAUNCH_ARGS (kernel, grid, block, args, shared_bytes, stream)
#define RLSCOPE_LAUNCH_FUNC_PARAMS \
  (const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream)
#define RLSCOPE_LAUNCH_FUNC_ARGS (func, grid, block, args, shared_bytes, stream)

#define RLSCOPE_CUDA_RUNTIME_APIS(X)                                                                                   \
  /* Kernel launches */                                                                                                \
  X(__cudaLaunchKernel, RLSCOPE_LAUNCH_PARAMS, RLSCOPE_LAUNCH_ARGS)                                                    \
  X(__cudaLaunchKernel_ptsz, RLSCOPE_LAUNCH_PARAMS, RLSCOPE_LAUNCH_ARGS)                                               \
  X(cudaLaunchKernel, RLSCOPE_LAUNCH_FUNC_PARAMS, RLSCOPE_LAUNCH_FUNC_ARGS)                                            \
  X(cudaLaunchKernel_ptsz, RLSCOPE_LAUNCH_FUNC_PARAMS, RLSCOPE_LAUNCH_FUNC_ARGS)                                       \
  X(cudaLaunchCooperativeKernel, RLSCOPE_LAUNCH_FUNC_PARAMS, RLSCOPE_LAUNCH_FUNC_ARGS)                                 \
  X(cudaLaunchCooperativeKernel_ptsz, RLSCOPE_LAUNCH_FUNC_PARAMS, RLSCOPE_LAUNCH_FUNC_ARGS)                            \
  X(cudaLaunchKernelExC, (const cudaLaunchConfig_t* config, const void* func, void** args), (config, func, args))      \
  X(cudaLaunchKernelExC_ptsz, (const cudaLaunchConfig_t* config, const void* func, void** args), (config, func, args)) \
  X(cudaGraphLaunch, (cudaGraphExec_t graph, cudaStream_t stream), (graph, stream))                                    \
  X(cudaGraphLaunch_ptsz, (cudaGraphExec_t graph, cudaStream_t stream), (graph, stream))                               \
  /* Copies */                                                                                                         \
  X(cudaMemcpy, (void* dst, const void* src, size_t count, cudaMemcpyKind kind), (dst, src, count, kind))              \
  X(cudaMemcpy_ptds, (void* dst, const void* src, size_t count, cudaMemcpyKind kind), (dst, src, count, kind))         \
  X(cudaMemcpyAsync, (void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream),             \
    (dst, src, count, kind, stream))                                                                                   \
  X(cudaMemcpyAsync_ptsz, (void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream),        \
    (dst, src, count, kind, stream))                                                                                   \
  X(cudaMemcpy2D,                                                                                                      \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind),      \
    (dst, dpitch, src, spitch, width, height, kind))                                                                   \
  X(cudaMemcpy2D_ptds,                                                                                                 \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind),      \
    (dst, dpitch, src, spitch, width, height, kind))                                                                   \
  X(cudaMemcpy2DAsync,                                                                                                 \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,       \
     cudaStream_t stream),                                                                                             \
    (dst, dpitch, src, spitch, width, height, kind, stream))                                                           \
  X(cudaMemcpy2DAsync_ptsz,                                                                                            \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,       \
     cudaStream_t stream),                                                                                             \
    (dst, dpitch, src, spitch, width, height, kind, stream))                                                           \
  X(cudaMemcpyPeer, (void* dst, int dst_device, const void* src, int src_device, size_t count),                        \
    (dst, dst_device, src, src_device, count))                                                                         \
  X(cudaMemcpyPeerAsync,                                                                                               \
    (void* dst, int dst_device, const void* src, int src_device, size_t count, cudaStream_t stream),                   \
    (dst, dst_device, src, src_device, count, stream))                                                                 \
  X(cudaMemcpyToSymbol, (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind),       \
    (symbol, src, count, offset, kind))                                                                                \
  X(cudaMemcpyToSymbol_ptds, (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind),  \
    (symbol, src, count, offset, kind))                                                                                \
  X(cudaMemcpyFromSymbol, (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind),           \
    (dst, symbol, count, offset, kind))                                                                                \
  X(cudaMemcpyFromSymbol_ptds, (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind),      \
    (dst, symbol, count, offset, kind))                                                                                \
  X(cudaMemcpyToSymbolAsync,                                                                                           \
    (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind, cudaStream_t stream),      \
    (symbol, src, count, offset, kind, stream))                                                                        \
  X(cudaMemcpyToSymbolAsync_ptsz,                                                                                      \
    (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind, cudaStream_t stream),      \
    (symbol, src, count, offset, kind, stream))                                                                        \
  X(cudaMemcpyFromSymbolAsync,                                                                                         \
    (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind, cudaStream_t stream),            \
    (dst, symbol, count, offset, kind, stream))                                                                        \
  X(cudaMemcpyFromSymbolAsync_ptsz,                                                                                    \
    (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind, cudaStream_t stream),            \
    (dst, symbol, count, offset, kind, stream))                                                                        \
  /* Memsets */                                                                                                        \
  X(cudaMemset, (void* ptr, int value, size_t count), (ptr, value, count))                                             \
  X(cudaMemset_ptds, (void* ptr, int value, size_t count), (ptr, value, count))                                        \
  X(cudaMemsetAsync, (void* ptr, int value, size_t count, cudaStream_t stream), (ptr, value, count, stream))           \
  X(cudaMemsetAsync_ptsz, (void* ptr, int value, size_t count, cudaStream_t stream), (ptr, value, count, stream))      \
  X(cudaMemset2D, (void* ptr, size_t pitch, int value, size_t width, size_t height),                                   \
    (ptr, pitch, value, width, height))                                                                                \
  X(cudaMemset2D_ptds, (void* ptr, size_t pitch, int value, size_t width, size_t height),                              \
    (ptr, pitch, value, width, height))                                                                                \
  X(cudaMemset2DAsync, (void* ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream),         \
    (ptr, pitch, value, width, height, stream))                                                                        \
  X(cudaMemset2DAsync_ptsz, (void* ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream),    \
    (ptr, pitch, value, width, height, stream))                                                                        \
  /* Memory management */                                                                                              \
  X(cudaMalloc, (void** ptr, size_t size), (ptr, size))                                                                \
  X(cudaFree, (void* ptr), (ptr))                                                                                      \
  X(cudaMallocHost, (void** ptr, size_t size), (ptr, size))                                                            \
  X(cudaFreeHost, (void* ptr), (ptr))                                                                                  \
  X(cudaHostAlloc, (void** ptr, size_t size, unsigned int flags), (ptr, size, flags))                                  \
  X(cudaMallocManaged, (void** ptr, size_t size, unsigned int flags), (ptr, size, flags))                              \
  X(cudaMallocPitch, (void** ptr, size_t* pitch, size_t width, size_t height), (ptr, pitch, width, height))            \
  X(cudaMallocAsync, (void** ptr, size_t size, cudaStream_t stream), (ptr, size, stream))                              \
  X(cudaMallocAsync_ptsz, (void** ptr, size_t size, cudaStream_t stream), (ptr, size, stream))                         \
  X(cudaFreeAsync, (void* ptr, cudaStream_t stream), (ptr, stream))                                                    \
  X(cudaFreeAsync_ptsz, (void* ptr, cudaStream_t stream), (ptr, stream))                                               \
  /* Synchronization */                                                                                                \
  X(cudaDeviceSynchronize, (void), ())                                                                                 \
  X(cudaStreamSynchronize, (cudaStream_t stream), (stream))                                                            \
  X(cudaStreamSynchronize_ptsz, (cudaStream_t stream), (stream))                                                       \
  X(cudaEventSynchronize, (cudaEvent_t event), (event))

#endif  // RLSCOPE_PRELOAD_CUDA_RUNTIME_API_LIST_H_
