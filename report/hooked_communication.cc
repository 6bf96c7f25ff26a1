#include "report/hooked_communication.h"

#include <array>

namespace rlscope::report {

namespace {

// Point-to-point calls and completions of NCCL and MPI (preload's default
// rules hook some; a user's --comm rule may add the others).
constexpr std::array<std::string_view, 10> kNotCollective = {"ncclSend",  "ncclRecv",  "MPI_Send",     "MPI_Recv",
                                                             "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Ssend",
                                                             "MPI_Probe", "MPI_Mprobe"};
constexpr std::array<std::string_view, 2> kNotCollectivePrefixes = {"MPI_Wait", "MPI_Test"};

}  // namespace

HookedCommunicationKind KindOfHookedCommunication(std::string_view function) {
  for (std::string_view name : kNotCollective) {
    if (function == name) return HookedCommunicationKind::kNotCollective;
  }
  for (std::string_view prefix : kNotCollectivePrefixes) {
    if (function.starts_with(prefix)) return HookedCommunicationKind::kNotCollective;
  }
  // NCCL queues its work on a stream and returns, except when the ranks
  // first meet (ncclCommInitRank, ncclCommInitAll, ...).
  if (function.starts_with("nccl") && !function.starts_with("ncclCommInit")) {
    return HookedCommunicationKind::kQueuedCollective;
  }
  return HookedCommunicationKind::kCollective;
}

}  // namespace rlscope::report
