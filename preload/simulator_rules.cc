#include "preload/simulator_rules.h"

#include <fnmatch.h>

#include <cstring>

#include "preload/problem_notice.h"
#include "preload/raw_log.h"

namespace rlscope::preload {

const char* const SimulatorRules::kDefaults[] = {
    "*libmujoco*:mj_step*",
    "*libmujoco*:mj_forward",
    "*libmujoco*:mj_resetData",
    "*libode*:dWorldStep",
    "*libode*:dWorldQuickStep",
    "*libbox2d*:_ZN7b2World4StepE*",  // b2World::Step(float, int, int), mangled.
    "*libBulletDynamics*:*stepSimulation*",
};
const int SimulatorRules::kDefaultCount = sizeof(kDefaults) / sizeof(kDefaults[0]);

// libtorch's C++ API as a program calls it: operator entry points
// (at::_ops::X::call, which at::Tensor's inline methods reach), at::Tensor's
// out-of-line methods (backward, item), and the torch:: namespace (nn
// modules, autograd, optim steps).
const char* const SimulatorRules::kBackendDefaults[] = {
    "*libtorch_cpu*:_ZN2at4_ops*",
    "*libtorch_cpu*:_ZNK2at6Tensor*",
    "*libtorch_cpu*:_ZN5torch*",
    "*libtorch_cuda*:_ZN5torch*",
};
const int SimulatorRules::kBackendDefaultCount = sizeof(kBackendDefaults) / sizeof(kBackendDefaults[0]);

// gloo's collectives are free functions taking their options struct
// (gloo::allreduce(const AllreduceOptions&), gloo::barrier(BarrierOptions&),
// ...), which the first glob matches and gloo's setters and constructors do
// not; connectFullMesh is the rendezvous with every other rank. NCCL's and
// MPI's calls that move data or wait for other ranks, not their queries
// (ncclCommGetAsyncError, which a watchdog thread polls, MPI_Comm_rank,
// MPI_Wtime, MPI_Alloc_mem, MPI_Reduce_local: hence MPI's by name). The
// report decides which of them are collectives the job view lines up
// across ranks (report/hooked_communication.h): point-to-point calls and
// completions count as Communication time only.
const char* const SimulatorRules::kCommunicationDefaults[] = {
    "*libgloo*:_ZN4gloo*ER*NS_*OptionsE",
    "*libgloo*:_ZN4gloo10rendezvous7Context15connectFullMesh*",
    "*libnccl*:ncclAll*",     // AllReduce, AllGather, AlltoAll.
    "*libnccl*:ncclReduce*",  // Reduce, ReduceScatter.
    "*libnccl*:ncclB*cast",   // Broadcast, Bcast.
    "*libnccl*:ncclSend",
    "*libnccl*:ncclRecv",
    "*libnccl*:ncclGroupEnd",   // Where grouped calls are launched.
    "*libnccl*:ncclCommInit*",  // The rendezvous.
    "*libmpi*:MPI_Allreduce",
    "*libmpi*:MPI_Allgather*",  // Allgather, Allgatherv.
    "*libmpi*:MPI_Alltoall*",   // Alltoall, Alltoallv, Alltoallw.
    "*libmpi*:MPI_Reduce",
    "*libmpi*:MPI_Reduce_scatter*",
    "*libmpi*:MPI_Bcast",
    "*libmpi*:MPI_Barrier",
    "*libmpi*:MPI_Wait*",  // Completion of non-blocking calls.
};
const int SimulatorRules::kCommunicationDefaultCount =
    sizeof(kCommunicationDefaults) / sizeof(kCommunicationDefaults[0]);

namespace {

bool IsGlobSpecial(char c) { return c == '*' || c == '?' || c == '[' || c == ']' || c == '\\'; }

// LongestLiteral: the longest run of non-glob characters of `glob`.
void LongestLiteral(const char* glob, char* out, size_t out_size) {
  size_t best_begin = 0, best_length = 0;
  for (size_t i = 0; glob[i] != '\0';) {
    if (IsGlobSpecial(glob[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (glob[j] != '\0' && !IsGlobSpecial(glob[j])) ++j;
    if (j - i > best_length) best_begin = i, best_length = j - i;
    i = j;
  }
  // A bracket expression's contents are not literal: drop anything inside
  // one by only trusting runs when the glob has no brackets at all.
  if (strchr(glob, '[') != nullptr) best_length = 0;
  if (best_length >= out_size) best_length = out_size - 1;
  memcpy(out, glob + best_begin, best_length);
  out[best_length] = '\0';
}

}  // namespace

void SimulatorRules::AddDefaults() {
  for (int i = 0; i < kDefaultCount; ++i) Add(kDefaults[i], strlen(kDefaults[i]), Kind::kSimulator);
  for (int i = 0; i < kBackendDefaultCount; ++i) {
    Add(kBackendDefaults[i], strlen(kBackendDefaults[i]), Kind::kBackend);
  }
  for (int i = 0; i < kCommunicationDefaultCount; ++i) {
    Add(kCommunicationDefaults[i], strlen(kCommunicationDefaults[i]), Kind::kCommunication);
  }
}

int SimulatorRules::AddList(const char* list, Kind kind) {
  if (list == nullptr) return 0;
  int added = 0;
  const char* entry = list;
  for (;;) {
    const char* end = strchr(entry, ',');
    size_t length = end != nullptr ? static_cast<size_t>(end - entry) : strlen(entry);
    // "a:b, c:d" is meant as two pairs: spaces around an entry are not part of it.
    const char* first = entry;
    while (length > 0 && *first == ' ') ++first, --length;
    while (length > 0 && first[length - 1] == ' ') --length;
    if (length > 0 && Add(first, length, kind)) ++added;
    if (end == nullptr) break;
    entry = end + 1;
  }
  return added;
}

bool SimulatorRules::Add(const char* entry, size_t length, Kind kind) {
  const char* colon = static_cast<const char*>(memchr(entry, ':', length));
  const int shown = static_cast<int>(length > 200 ? 200 : length);
  if (colon == nullptr || colon == entry || colon == entry + length - 1) {
    ReportProblem("simulator-rules", "RLSCOPE_SIM: '%.*s' is not LIBRARY-GLOB:SYMBOL-GLOB; ignored", shown, entry);
    return false;
  }
  const size_t library_length = static_cast<size_t>(colon - entry);
  const size_t symbol_length = length - library_length - 1;
  if (library_length >= kMaxGlobBytes || symbol_length >= kMaxGlobBytes) {
    ReportProblem("simulator-rules", "RLSCOPE_SIM: '%.*s' is longer than %zu bytes a side; ignored", shown, entry,
                  kMaxGlobBytes - 1);
    return false;
  }
  if (count_ == kMaxRules) {
    ReportProblem("simulator-rules", "RLSCOPE_SIM: more than %d simulator rules; '%.*s' ignored", kMaxRules, shown,
                  entry);
    return false;
  }
  Rule& rule = rules_[count_];
  memcpy(rule.library, entry, library_length);
  rule.library[library_length] = '\0';
  memcpy(rule.symbol, colon + 1, symbol_length);
  rule.symbol[symbol_length] = '\0';
  LongestLiteral(rule.symbol, rule.symbol_literal, sizeof(rule.symbol_literal));
  LongestLiteral(rule.library, rule.library_literal, sizeof(rule.library_literal));
  while (rule.symbol[rule.symbol_prefix_length] != '\0' && !IsGlobSpecial(rule.symbol[rule.symbol_prefix_length])) {
    ++rule.symbol_prefix_length;
  }
  rule.kind = kind;
  ++count_;
  return true;
}

bool SimulatorRules::SymbolMatches(const Rule& rule, const char* symbol) const {
  if (strncmp(symbol, rule.symbol, rule.symbol_prefix_length) != 0) return false;
  if (rule.symbol_literal[0] != '\0' && strstr(symbol, rule.symbol_literal) == nullptr) return false;
  return fnmatch(rule.symbol, symbol, 0) == 0;
}

bool SimulatorRules::LibraryMatches(const Rule& rule, const char* path) {
  if (rule.library_literal[0] != '\0' && strstr(path, rule.library_literal) == nullptr) return false;
  return fnmatch(rule.library, path, 0) == 0;
}

bool SimulatorRules::SymbolMayMatch(const char* symbol) const {
  return SymbolMayMatch(symbol, /*caller_is_program=*/true);
}

bool SimulatorRules::SymbolMayMatch(const char* symbol, bool caller_is_program) const {
  for (int i = 0; i < count_; ++i) {
    if (rules_[i].kind == Kind::kBackend && !caller_is_program) continue;
    if (SymbolMatches(rules_[i], symbol)) return true;
  }
  return false;
}

bool SimulatorRules::LibraryMatches(const char* path) const {
  if (path == nullptr || path[0] == '\0') return false;  // The main program is never "the simulator".
  for (int i = 0; i < count_; ++i) {
    if (LibraryMatches(rules_[i], path)) return true;
  }
  return false;
}

bool SimulatorRules::HookedFromEveryObject(const char* path) const {
  if (path == nullptr || path[0] == '\0') return false;
  for (int i = 0; i < count_; ++i) {
    if (rules_[i].kind != Kind::kBackend && LibraryMatches(rules_[i], path)) return true;
  }
  return false;
}

bool SimulatorRules::CommunicationLibrary(const char* path) const {
  if (path == nullptr || path[0] == '\0') return false;
  for (int i = 0; i < count_; ++i) {
    if (rules_[i].kind == Kind::kCommunication && LibraryMatches(rules_[i], path)) return true;
  }
  return false;
}

SimulatorRules::Kind SimulatorRules::Match(const char* path, const char* symbol, bool caller_is_program) const {
  if (path == nullptr || path[0] == '\0') return Kind::kNone;
  for (int i = 0; i < count_; ++i) {
    if (rules_[i].kind == Kind::kBackend && !caller_is_program) continue;
    if (SymbolMatches(rules_[i], symbol) && LibraryMatches(rules_[i], path)) return rules_[i].kind;
  }
  return Kind::kNone;
}

}  // namespace rlscope::preload
