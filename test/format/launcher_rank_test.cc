#include "format/launcher_rank.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using rlscope::LauncherRank;
using rlscope::LauncherRankOf;

namespace {

// Environ: NAME=VALUE entries ending with a null pointer, as `environ`.
std::vector<const char*> Environ(std::initializer_list<const char*> entries) {
  std::vector<const char*> out(entries);
  out.push_back(nullptr);
  return out;
}

}  // namespace

TEST_CASE("torchrun's variables give the rank", "[launcher_rank]") {
  const LauncherRank rank = LauncherRankOf(
      Environ({"PATH=/usr/bin", "RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=none"}).data());
  CHECK(rank.launcher == "torchrun");
  CHECK(rank.rank == 3);
  CHECK(rank.world_size == 4);
  CHECK(rank.local_rank == 1);
  CHECK(LauncherRankOf(Environ({"RANK=0", "WORLD_SIZE=2"}).data()).launcher == "torch.distributed");
}

TEST_CASE("MPI and Slurm launchers give the rank", "[launcher_rank]") {
  const LauncherRank open_mpi = LauncherRankOf(
      Environ({"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_RANK=1"}).data());
  CHECK(open_mpi.launcher == "mpirun (Open MPI)");
  CHECK((open_mpi.rank == 5 && open_mpi.world_size == 8 && open_mpi.local_rank == 1));
  const LauncherRank pmi = LauncherRankOf(Environ({"PMI_RANK=2", "PMI_SIZE=3"}).data());
  CHECK(pmi.launcher == "mpirun (PMI)");
  CHECK(pmi.local_rank == -1);
  // srun's only inside a job step: a batch script has SLURM_PROCID too.
  CHECK(LauncherRankOf(Environ({"SLURM_PROCID=0", "SLURM_NTASKS=4"}).data()).launcher.empty());
  CHECK(LauncherRankOf(Environ({"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_STEP_ID=0"}).data()).launcher == "srun");
  // torch's variables win over the MPI launcher running it.
  CHECK(LauncherRankOf(Environ({"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "RANK=1", "WORLD_SIZE=2"}).data())
            .launcher == "torch.distributed");
}

TEST_CASE("A rank that is not a rank of its world is none", "[launcher_rank]") {
  for (const std::vector<const char*>& environment :
       {Environ({"RANK=4", "WORLD_SIZE=4"}), Environ({"RANK=-1", "WORLD_SIZE=4"}), Environ({"RANK=1x", "WORLD_SIZE=4"}),
        Environ({"RANK=0", "WORLD_SIZE=0"}), Environ({"RANK=0"}), Environ({"XRANK=0", "WORLD_SIZE=2"}),
        Environ({"RANK=99999999999", "WORLD_SIZE=2"}), Environ({"RANK=0", "WORLD_SIZE"}), Environ({})}) {
    CHECK(LauncherRankOf(environment.data()).launcher.empty());
  }
  CHECK(LauncherRankOf(nullptr).launcher.empty());
  // A broken torch set falls through to the MPI launcher's.
  CHECK(LauncherRankOf(Environ({"RANK=9", "WORLD_SIZE=2", "PMI_RANK=1", "PMI_SIZE=2"}).data()).launcher ==
        "mpirun (PMI)");
}
