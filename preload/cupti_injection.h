// CUPTI capture: GPU activity (kernels, copies, memsets and CUPTI's own
// overhead, with GPU times on rlscope's clock) and the CUDA calls that
// bypass libcudart's PLT (cuBLAS/cuDNN's, JAX/XLA's driver calls), seen
// through CUPTI's callback API.
//
// It starts in InitializeInjection, which the CUDA driver calls from
// cuInit because the launcher points CUDA_INJECTION64_PATH at the preload;
// never from a constructor (subscribing there hung torch). If CUPTI cannot
// be loaded or used (no library, no GPU, another CUPTI client such as
// Nsight Systems or torch.profiler), capture degrades: one line on stderr,
// a notice in the trace (the report says the GPU level is missing), and
// the program runs on.
#ifndef RLSCOPE_PRELOAD_CUPTI_INJECTION_H_
#define RLSCOPE_PRELOAD_CUPTI_INJECTION_H_

#include <string_view>

namespace rlscope::preload {

// CuptiWatchesApi: whether CUPTI's callbacks are enabled for the CUDA
// function `name` (by name: launches, copies, memsets, graph launches,
// waits; runtime or driver). A hooked runtime call that is one of these
// names CUPTI's view of the driver call inside it; one that is not (an
// allocation that synchronises, say) leaves the driver's name on it.
bool CuptiWatchesApi(std::string_view name);

// FlushGpuActivity: has CUPTI deliver every buffered record now (forced:
// incomplete records too). With `final`, CUPTI is never called again
// (the process is exiting: CUPTI tears itself down after our atexit
// handler, and calling it after that crashed JAX). No-op when CUPTI is not
// active in this process (fork children included).
void FlushGpuActivity(bool final);

// MaybeFlushGpuActivity: the flusher's periodic, non-forced flush (at most
// every kPeriodicFlushMs), so GPU records stream while the program runs.
void MaybeFlushGpuActivity();

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CUPTI_INJECTION_H_
