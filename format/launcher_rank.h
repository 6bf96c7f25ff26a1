// LauncherRank: a process's rank in a distributed job, as its launcher
// told it through the environment: torchrun (RANK, WORLD_SIZE,
// LOCAL_RANK), Open MPI's mpirun (OMPI_COMM_WORLD_*), MPICH and Intel MPI
// (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID) or Slurm's srun (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, inside a job step only: the batch script
// has SLURM_PROCID too). The preload reads it from `environ` once, in its
// constructor, before the program's own code can setenv or overwrite it
// (setproctitle). Shared by the preload and its tests.
#ifndef RLSCOPE_FORMAT_LAUNCHER_RANK_H_
#define RLSCOPE_FORMAT_LAUNCHER_RANK_H_

#include <string>
#include <string_view>

namespace rlscope {

struct LauncherRank {
  std::string launcher;  // "torchrun", "torch.distributed", "mpirun (Open MPI)", "mpirun (PMI)", "srun"; "" none.
  int rank = -1;
  int world_size = 0;
  int local_rank = -1;  // -1: not told.
};

// LauncherRankOf: from `environment`, NAME=VALUE strings ending with a
// null pointer (`environ`); launcher "" when no launcher's variables give
// a rank within its world size.
LauncherRank LauncherRankOf(const char* const* environment);

}  // namespace rlscope

#endif  // RLSCOPE_FORMAT_LAUNCHER_RANK_H_
