// HookedCommunication: what a hooked communication library call (wire
// kCommunicationCall: gloo, NCCL, MPI, or a user's --comm rule) means for
// the job view, by the function's name.
//
// Every such call is Communication time. Only collectives, which every rank
// of a job issues in the same order, are lined up across ranks
// (collective_calls.h): point-to-point transfers (ncclSend, MPI_Send) and
// completions (MPI_Wait*) may be issued a different number of times by each
// rank, and counting them would keep the ranks from lining up at all.
//
// A collective that returns once its transfer is queued on a device stream
// (NCCL's, all but its rendezvous) ends on the CPU when the rank queued it,
// not when the ranks met: such an end must not align clocks across nodes
// (clock_alignment.h). Decision: a user's --comm function is a collective
// that blocks, the common case for an RPC or a collective library; the
// name lists below are the known exceptions.
#ifndef RLSCOPE_REPORT_HOOKED_COMMUNICATION_H_
#define RLSCOPE_REPORT_HOOKED_COMMUNICATION_H_

#include <string_view>

namespace rlscope::report {

enum class HookedCommunicationKind {
  kCollective,        // Blocks until the ranks have met (gloo, MPI, NCCL's rendezvous).
  kQueuedCollective,  // Returns once queued (NCCL's collectives and group launches).
  kNotCollective,     // Point-to-point or completion: Communication time only.
};

HookedCommunicationKind KindOfHookedCommunication(std::string_view function);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_HOOKED_COMMUNICATION_H_
