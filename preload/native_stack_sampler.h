// NativeStackSampler: for programs (or threads) without Python, operations
// come from native call stacks. At a transition (a CUDA runtime call, a
// hooked simulator call) of a thread that does not run Python, the sampler
// records the raw return addresses of the call stack - at most one sample
// per thread per interval (RLSCOPE_STACK_INTERVAL_US, default 1000 us) - as
// kNativeStack/kNativeStackFrames events. Symbolising and matching them
// against the operation rules happens in the collector, never here.
//
// The stack is walked with libunwind's unw_backtrace, dlopen'ed RTLD_LOCAL:
// linking libunwind would replace the process's own unwinder (_Unwind_*).
#ifndef RLSCOPE_PRELOAD_NATIVE_STACK_SAMPLER_H_
#define RLSCOPE_PRELOAD_NATIVE_STACK_SAMPLER_H_

#include <cstdint>

namespace rlscope::preload {

// InitNativeStackSampler: reads the interval. Call once at start-up when
// recording. libunwind itself is loaded at the first sample (without it,
// one line on stderr and no sampling).
void InitNativeStackSampler();

// SetSampleIntervalNs: the flusher tells the hot path the interval in ticks
// once it knows the tick rate.
void SetStackSampleTicksPerNs(double ticks_per_ns);

// MaybeSampleNativeStack: records a sample if this thread is due one;
// returns whether it did (the caller then takes a fresh timestamp, so the
// sampling is not counted in the interval it starts).
bool MaybeSampleNativeStack(uint64_t now_ticks);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_NATIVE_STACK_SAMPLER_H_
