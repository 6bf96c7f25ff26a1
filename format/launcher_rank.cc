#include "format/launcher_rank.h"

namespace rlscope {

namespace {

// The variables any launcher uses. A fixed table, not a map: the preload
// compiles this file too, and std:: templates it instantiated would be
// exported from it (libstdc++ gives namespace std default visibility).
constexpr std::string_view kNames[] = {"RANK",
                                       "WORLD_SIZE",
                                       "LOCAL_RANK",
                                       "TORCHELASTIC_RUN_ID",
                                       "OMPI_COMM_WORLD_RANK",
                                       "OMPI_COMM_WORLD_SIZE",
                                       "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "PMI_RANK",
                                       "PMI_SIZE",
                                       "MPI_LOCALRANKID",
                                       "SLURM_PROCID",
                                       "SLURM_NTASKS",
                                       "SLURM_LOCALID",
                                       "SLURM_STEP_ID",
                                       "SLURM_STEPID"};
constexpr size_t kVariables = sizeof(kNames) / sizeof(kNames[0]);

struct Variables {
  std::string_view value[kVariables];
  bool set[kVariables] = {};

  explicit Variables(const char* const* environment) {
    for (const char* const* variable = environment; variable != nullptr && *variable != nullptr; ++variable) {
      const std::string_view entry(*variable);
      const size_t equals = entry.find('=');
      for (size_t i = 0; equals != std::string_view::npos && i < kVariables; ++i) {
        if (entry.substr(0, equals) == kNames[i]) {
          value[i] = entry.substr(equals + 1);
          set[i] = true;
        }
      }
    }
  }

  size_t IndexOf(std::string_view name) const {
    for (size_t i = 0; i < kVariables; ++i) {
      if (kNames[i] == name) return i;
    }
    return kVariables;
  }
  bool Has(std::string_view name) const {
    const size_t i = IndexOf(name);
    return i < kVariables && set[i];
  }
  // Number: a whole number in [0, 1 << 24), or -1.
  int Number(std::string_view name) const {
    const size_t i = IndexOf(name);
    if (i == kVariables || !set[i] || value[i].empty()) return -1;
    // By hand, not std::from_chars: a template the preload would export.
    int number = 0;
    for (const char digit : value[i]) {
      if (digit < '0' || digit > '9') return -1;
      number = number * 10 + (digit - '0');
      if (number >= (1 << 24)) return -1;
    }
    return number;
  }
};

}  // namespace

LauncherRank LauncherRankOf(const char* const* environment) {
  const Variables variables(environment);
  struct Source {
    const char* launcher;
    std::string_view rank, size, local;
    bool usable;
  };
  const bool torchelastic = variables.Has("TORCHELASTIC_RUN_ID");
  const bool slurm_step = variables.Has("SLURM_STEP_ID") || variables.Has("SLURM_STEPID");
  // torch's own variables first: a torch job under mpirun or srun is ranked
  // by what torch uses.
  const Source sources[] = {
      {torchelastic ? "torchrun" : "torch.distributed", "RANK", "WORLD_SIZE", "LOCAL_RANK", true},
      {"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", true},
      {"mpirun (PMI)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", true},
      {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", slurm_step},
  };
  for (const Source& source : sources) {
    if (!source.usable) continue;
    const int rank = variables.Number(source.rank), size = variables.Number(source.size);
    if (rank < 0 || size < 1 || rank >= size) continue;
    return LauncherRank{source.launcher, rank, size, variables.Number(source.local)};
  }
  return {};
}

}  // namespace rlscope
