#include "format/launcher_rank.h"

#include <charconv>
#include <map>

namespace rlscope {

namespace {

// Variables: the entries whose names any launcher uses.
std::map<std::string_view, std::string_view> Variables(std::string_view environ) {
  static constexpr std::string_view kNames[] = {"RANK",
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
  std::map<std::string_view, std::string_view> found;
  size_t begin = 0;
  while (begin < environ.size()) {
    size_t end = environ.find('\0', begin);
    if (end == std::string_view::npos) end = environ.size();
    const std::string_view entry = environ.substr(begin, end - begin);
    const size_t equals = entry.find('=');
    if (equals != std::string_view::npos) {
      const std::string_view name = entry.substr(0, equals);
      for (std::string_view known : kNames) {
        if (name == known) found[known] = entry.substr(equals + 1);
      }
    }
    begin = end + 1;
  }
  return found;
}

// Number: a whole number in [0, 1 << 24), or -1.
int Number(const std::map<std::string_view, std::string_view>& variables, std::string_view name) {
  const auto it = variables.find(name);
  if (it == variables.end() || it->second.empty()) return -1;
  int value = -1;
  const auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (error != std::errc() || end != it->second.data() + it->second.size() || value < 0 || value >= (1 << 24)) {
    return -1;
  }
  return value;
}

}  // namespace

LauncherRank LauncherRankOf(std::string_view environ) {
  const auto variables = Variables(environ);
  struct Source {
    const char* launcher;
    std::string_view rank, size, local;
    bool usable;
  };
  const bool torchelastic = variables.count("TORCHELASTIC_RUN_ID") != 0;
  const bool slurm_step = variables.count("SLURM_STEP_ID") != 0 || variables.count("SLURM_STEPID") != 0;
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
    const int rank = Number(variables, source.rank), size = Number(variables, source.size);
    if (rank < 0 || size < 1 || rank >= size) continue;
    return LauncherRank{source.launcher, rank, size, Number(variables, source.local)};
  }
  return {};
}

}  // namespace rlscope
