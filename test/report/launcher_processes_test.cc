#include "report/launcher_processes.h"

#include <catch2/catch.hpp>
#include <map>

using namespace rlscope::report;

namespace {

ProcessTimeline Process(int pid, int ppid, int64_t begin_ns, int64_t end_ns, NameTable& names,
                        const char* operation = nullptr) {
  ProcessTimeline process;
  process.pid = pid;
  process.ppid = ppid;
  process.begin_ns = begin_ns;
  process.end_ns = end_ns;
  ThreadTimeline& thread = process.threads.emplace_back();
  thread.tid = static_cast<uint32_t>(pid);
  thread.begin_ns = begin_ns;
  thread.end_ns = end_ns;
  if (operation != nullptr) thread.inferred_operations.push_back({begin_ns + 1, end_ns - 1, names.Intern(operation)});
  return process;
}

bool Launcher(const ProcessTimeline& process, const NameTable& names) {
  for (const ThreadTimeline& thread : process.threads) {
    if (thread.inferred_operations.size() != 1) return false;
    const Interval& whole = thread.inferred_operations.front();
    if (names.Name(whole.label) != kLauncherOperation || whole.begin_ns != thread.begin_ns ||
        whole.end_ns != thread.end_ns || thread.operation_instances.size() != 1) {
      return false;
    }
  }
  return !process.threads.empty();
}

}  // namespace

TEST_CASE("A process that only starts processes with operations is a launcher", "[launcher]") {
  NameTable names;
  std::vector<ProcessTimeline> processes;
  processes.push_back(Process(10, 1, 0, 1000, names));                   // torchrun's agent...
  processes.back().threads.push_back(processes.back().threads.front());  // ... with a keep-alive thread.
  processes.back().threads.back().tid = 99;
  processes.push_back(Process(11, 10, 100, 900, names, "backprop"));   // ... and its worker.
  processes.push_back(Process(20, 1, 0, 1000, names));                 // mpirun
  processes.push_back(Process(21, 20, 10, 990, names));                // its daemon
  processes.push_back(Process(22, 21, 20, 980, names, "simulation"));  // a rank
  processes.push_back(Process(30, 1, 0, 1000, names));                 // alone, no operation: (none)
  processes.push_back(Process(40, 1, 0, 1000, names));                 // starts a helper without operations
  processes.push_back(Process(41, 40, 10, 20, names));
  processes.push_back(Process(50, 1, 0, 1000, names, "inference"));  // acts itself and starts env workers
  processes.push_back(Process(51, 50, 10, 900, names, "simulation"));
  processes.push_back(Process(60, 1, 0, 100, names));                 // ended before a later process
  processes.push_back(Process(61, 60, 200, 300, names, "backprop"));  // took its pid as parent
  MarkLaunchers(processes, names);
  std::map<int, bool> launchers;
  for (const ProcessTimeline& process : processes) launchers[process.pid] = Launcher(process, names);
  CHECK(launchers == std::map<int, bool>{{10, true},
                                         {11, false},
                                         {20, true},
                                         {21, true},
                                         {22, false},
                                         {30, false},
                                         {40, false},
                                         {41, false},
                                         {50, false},
                                         {51, false},
                                         {60, false},
                                         {61, false}});
  // The others keep what they had.
  CHECK(processes[5].threads[0].inferred_operations.empty());
  CHECK(processes[8].threads[0].inferred_operations.size() == 1);
  CHECK(names.Name(processes[8].threads[0].inferred_operations[0].label) == "inference");
}

TEST_CASE("A fork child names its parent by the process it was forked from", "[launcher]") {
  NameTable names;
  std::vector<ProcessTimeline> processes;
  processes.push_back(Process(10, 1, 0, 1000, names));
  processes.push_back(Process(11, 1, 100, 900, names, "simulation"));  // Re-parented, but forked from 10.
  processes.back().forked_from = 10;
  MarkLaunchers(processes, names);
  CHECK(Launcher(processes[0], names));
}
