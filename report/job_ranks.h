// JobRanks: the processes of a run that are ranks of one job, and the
// job's view: each operation's time summed over the ranks and per rank,
// side by side, with the slowest rank.
//
// Recognised two ways:
//   - by the launcher's environment (format/launcher_rank.h: torchrun,
//     mpirun, srun): the processes that share a launcher and world size,
//     one per rank (where a rank's process started others that inherited
//     its variables, the earliest holds the rank), two ranks or more;
//   - by the process tree: two or more processes of one parent running one
//     command, numbers aside, each with traced work (multiprocessing's spawn and forkserver
//     children differ only in their pipe numbers; a fork child keeps its
//     parent's command): multiprocessing.spawn, a vector env's workers, a
//     Ray-style pool. Their ranks are their start order.
#ifndef RLSCOPE_REPORT_JOB_RANKS_H_
#define RLSCOPE_REPORT_JOB_RANKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rlscope::report {

struct RunReport;  // run_report.h, which keeps the jobs.

struct JobReport {
  // "torchrun", "mpirun (Open MPI)", ...; "process tree" for ranks told
  // apart by the tree alone.
  std::string launcher;
  int parent_pid = 0;   // The common parent (tree), or 0.
  int world_size = 0;   // As the launcher told it; for the tree, the ranks found.
  std::string command;  // The ranks' command (the first rank's).
  struct Rank {
    int rank = 0;
    int pid = 0;
    size_t process = 0;  // Index in RunReport::processes.
    std::string node;    // Its node's label in a merge of several nodes' runs (job_merge.h); "" otherwise.
  };
  std::vector<Rank> ranks;  // By rank.
  struct Operation {
    std::string operation;
    int64_t total_ns = 0;              // CPU-side time (no Wait, no GPU), summed over the ranks.
    std::vector<int64_t> per_rank_ns;  // In `ranks` order.
    size_t slowest = 0;                // Index in `ranks` of the rank with the most time in it.
    double slowest_over_mean = 0;      // The slowest rank's time over the ranks' mean (1: even).
    // Of per_rank_ns, the time each rank waited in this operation's
    // collectives for the last rank to arrive; empty unless lined up and
    // some rank issued a collective in it.
    std::vector<int64_t> per_rank_wait_ns;
  };
  std::vector<Operation> operations;  // Largest total first.
  // Communication between the ranks (category Communication), and how much
  // of it was waiting for other ranks. The k-th collective of every rank
  // (collective_calls.h) is the same collective (collectives must be
  // issued in one order on every rank); a rank's wait in it is from its
  // arrival to the last rank's arrival (the processes of one run share one
  // clock), at most its time in it. The last to arrive is the straggler.
  struct Communication {
    std::vector<int64_t> per_rank_ns;       // CPU-side Communication time, in `ranks` order.
    uint64_t collectives = 0;               // Per rank, when lined up.
    bool lined_up = false;                  // Every rank issued the same number (> 0) of collectives.
    std::string not_lined_up;               // Why waits are not told, when some rank issued collectives.
    std::vector<int64_t> per_rank_wait_ns;  // Lined up: waiting for the last to arrive.
    std::vector<uint64_t> per_rank_last;    // Lined up: the collectives it arrived at last.
  };
  Communication communication;
};

// JobsOf: the jobs among `report`'s processes (its rows and processes
// complete), in the order of their first rank's start; jobs with no
// operation time are left out.
std::vector<JobReport> JobsOf(const RunReport& report);

// NumbersAside: `text` with every run of digits replaced by one '#', the
// key by which one command's instances are told from another command.
std::string NumbersAside(const std::string& text);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_JOB_RANKS_H_
