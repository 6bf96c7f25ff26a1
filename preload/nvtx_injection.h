// NVTX injection (nvtx_injection.cc): NVTX ranges become operations.
#ifndef RLSCOPE_PRELOAD_NVTX_INJECTION_H_
#define RLSCOPE_PRELOAD_NVTX_INJECTION_H_

#include <cstdint>

namespace rlscope::preload {

// ReopenNvtxRangesAfterFork: in a fork() child, records a push (at `ticks`)
// for each range the forking thread had open, so the child's time inside
// them is attributed to them and its pops balance.
void ReopenNvtxRangesAfterFork(uint64_t ticks);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_NVTX_INJECTION_H_
