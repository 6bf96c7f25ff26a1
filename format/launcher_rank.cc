#include "format/launcher_rank.h"

#include <charconv>

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

  explicit Variables(std::string_view environ) {
    size_t begin = 0;
    while (begin < environ.size()) {
      size_t end = environ.find('\0', begin);
      if (end == std::string_view::npos) end = environ.size();
      const std::string_view entry = environ.substr(begin, end - begin);
      const size_t equals = entry.find('=');
      for (size_t i = 0; equals != std::string_view::npos && i < kVariables; ++i) {
        if (entry.substr(0, equals) == kNames[i]) {
          value[i] = entry.substr(equals + 1);
          set[i] = true;
        }
      }
      begin = end + 1;
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
    int number = -1;
    const auto [end, error] = std::from_chars(value[i].data(), value[i].data() + value[i].size(), number);
    if (error != std::errc() || end != value[i].data() + value[i].size() || number < 0 || number >= (1 << 24)) {
      return -1;
    }
    return number;
  }
};

}  // namespace

LauncherRank LauncherRankOf(std::string_view environ) {
  const Variables variables(environ);
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
