// CollectiveCalls: a thread's calls into other ranks (Communication native
// calls, category.h), one entry per collective as the thread issued it, so
// the job view can line the ranks' k-th collectives up and tell how long
// each rank waited for the last one to arrive (job_ranks.h).
//
// A collective is a maximal run of consecutive top-level native calls (in
// no other native call) made for one line of the user's code (the shown
// line: dist.all_reduce(...) in train.py, whatever torch.distributed calls
// beneath it), holding at least one Communication call: from the first
// Communication call's start to the last one's end. A loop over parameters
// calling all_reduce from one line is then one collective per pass, the
// same on every rank, since the grouping depends on the calls made, not
// on their times. Communication calls nested in other native calls (a
// comm hook called back from C++) are not counted there.
//
// A collective issued from native code with no Python call for it (DDP's
// gradient all-reduce during backward) is a hooked communication library
// call that is a collective (HookedCollective: one gloo collective, NCCL
// collective or MPI collective) outside the thread's Python-level
// Communication calls. It may run on another thread than the Python call
// that waits for it (gloo's worker threads under dist.all_reduce): the
// process's list then keeps the Python-level one only
// (WithoutServedCollectives).
//
// Not handled: dist.all_reduce(..., async_op=True) over gloo returns
// before its worker begins, so the worker's call is a second collective
// (on every rank alike: they still line up, each counted twice; the
// Python-level one's wait is at most its own short time). Telling it
// from DDP's next all-reduce needs the Work handle, which is not traced.
#ifndef RLSCOPE_REPORT_COLLECTIVE_CALLS_H_
#define RLSCOPE_REPORT_COLLECTIVE_CALLS_H_

#include <cstdint>
#include <vector>

#include "report/interval.h"
#include "report/process_timeline.h"

namespace rlscope::report {

struct CollectiveCall {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int32_t operation = 0;  // NameTable label of the operation it began in.
  bool native = false;    // Issued from native code (a hooked call), not by a Python call.
  // Returns once queued on a device (NCCL): its end is when this rank
  // queued it, not when the ranks met (HookedCollective::queued).
  bool queued = false;
};

// CollectiveCallsOf: `calls` (a thread's, in record order), in start
// order; queued when a queued one of the thread's `hooked` collectives
// began inside (dist.all_reduce over NCCL). `operations`: the thread's
// operation timeline (sorted, disjoint); `none`: the label of "(none)".
std::vector<CollectiveCall> CollectiveCallsOf(const std::vector<NativeCall>& calls,
                                              const std::vector<HookedCollective>& hooked,
                                              const IntervalList& operations, int32_t none);

// NativeCollectivesOf: the thread's `hooked` collectives that began in
// none of its Python-level Communication `calls` (bounds included: a call
// the correction shrank to nothing still holds what began at its time), as
// collectives (native = true), in start order.
std::vector<CollectiveCall> NativeCollectivesOf(const std::vector<HookedCollective>& hooked,
                                                const std::vector<NativeCall>& calls, const IntervalList& operations,
                                                int32_t none);

// WithoutServedCollectives: a process's collectives (all its threads'),
// without the native ones that began inside a Python-level one of the same
// process, bounds included (the transfer a Python call waited for, run by
// another thread), in start order; at one time a Python-level one first.
std::vector<CollectiveCall> WithoutServedCollectives(std::vector<CollectiveCall> collectives);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_COLLECTIVE_CALLS_H_
