// SimulatorRules: which functions are simulator entry points, as
// `library-glob:symbol-glob` pairs (fnmatch). The library glob is matched
// against the loaded object's path, the symbol glob against the (mangled)
// symbol name. Defaults cover MuJoCo, ODE, Box2D and Bullet; RLSCOPE_SIM
// (set by `rlscope run --sim LIB:PATTERN`) adds comma-separated pairs.
//
// Fixed storage, no allocation: rules are read by the dlsym interposer on
// any thread once installed, and never change after that.
#ifndef RLSCOPE_PRELOAD_SIMULATOR_RULES_H_
#define RLSCOPE_PRELOAD_SIMULATOR_RULES_H_

#include <cstddef>

namespace rlscope::preload {

class SimulatorRules {
 public:
  static constexpr int kMaxRules = 64;
  static constexpr size_t kMaxGlobBytes = 160;

  // The built-in pairs, e.g. "*libmujoco*:mj_step*".
  static const char* const kDefaults[];
  static const int kDefaultCount;

  // Backend rules (`rlscope run --backend`, RLSCOPE_BACKEND): the same
  // pairs, but their calls are Backend time and only the main program's own
  // imports are hooked. They are for native programs calling an ML
  // backend's C++ API (libtorch): every call becomes a transition, so its
  // native stack can be sampled there. Framework libraries calling each
  // other are never hooked (that would be every operator call, and is not
  // the program's code).
  static const char* const kBackendDefaults[];
  static const int kBackendDefaultCount;

  // Communication rules (`rlscope run --comm`, RLSCOPE_COMM): calls from
  // any object into a communication library, as Communication time. Their
  // point is the collectives a framework issues from C++ with no Python
  // call (DistributedDataParallel's gradient all-reduce during backward,
  // from libtorch into gloo or NCCL), which would otherwise be Backend.
  // Only entry points that communicate are named, not the libraries'
  // helpers, so a hooked call is one collective, rendezvous or transfer.
  static const char* const kCommunicationDefaults[];
  static const int kCommunicationDefaultCount;

  enum class Kind { kNone, kSimulator, kBackend, kCommunication };

  // AddDefaults: appends kDefaults, kBackendDefaults and
  // kCommunicationDefaults.
  void AddDefaults();
  // AddList: appends the pairs of a comma-separated `LIB:PATTERN` list.
  // A malformed entry (no ':', an empty side, too long, no room left) is
  // reported with one RawLog line and skipped. Returns the entries added.
  int AddList(const char* list, Kind kind = Kind::kSimulator);

  int size() const { return count_; }
  const char* library_glob(int i) const { return rules_[i].library; }
  const char* symbol_glob(int i) const { return rules_[i].symbol; }

  // SymbolMayMatch: whether some rule's symbol glob matches `symbol`, for
  // whatever library (the cheap first filter of dlsym and the GOT scan).
  // With `caller_is_program` false, backend rules are left out: only the
  // main program's imports are hooked by them.
  bool SymbolMayMatch(const char* symbol) const;
  bool SymbolMayMatch(const char* symbol, bool caller_is_program) const;
  // LibraryMatches: whether `path` is a hooked library of some rule
  // (simulator, backend or communication).
  bool LibraryMatches(const char* path) const;
  // HookedFromEveryObject: whether `path` is the library of a simulator or
  // communication rule, one whose calls are hooked from every object, not
  // only the program.
  bool HookedFromEveryObject(const char* path) const;
  // CommunicationLibrary: whether `path` is the library of a communication
  // rule (its callers are the objects linked against it).
  bool CommunicationLibrary(const char* path) const;
  // Matches: whether `symbol` defined by the object at `path` is hooked
  // when called from other objects in general (simulator and communication
  // rules).
  bool Matches(const char* path, const char* symbol) const {
    return Match(path, symbol, /*caller_is_program=*/false) != Kind::kNone;
  }
  // Match: the kind of hook for a call of `symbol` (defined by `path`) from
  // the main program (`caller_is_program`) or another object.
  Kind Match(const char* path, const char* symbol, bool caller_is_program) const;

 private:
  // Every member has an initializer: the preload's rules are a constinit
  // global (set before any constructor runs, whatever the link order).
  struct Rule {
    char library[kMaxGlobBytes] = {};
    char symbol[kMaxGlobBytes] = {};
    // The longest run of plain characters in `symbol`: a name without it
    // cannot match, and strstr is much cheaper than fnmatch.
    char symbol_literal[kMaxGlobBytes] = {};
    // The same for `library`: every refresh matches every loaded object's
    // path (hundreds in a Python process) against every rule.
    char library_literal[kMaxGlobBytes] = {};
    // How many plain characters `symbol` starts with: a name not starting
    // with them cannot match, and most names fail at their first character
    // (a framework library imports tens of thousands of them).
    size_t symbol_prefix_length = 0;
    Kind kind = Kind::kNone;
  };
  bool Add(const char* entry, size_t length, Kind kind);
  bool SymbolMatches(const Rule& rule, const char* symbol) const;
  static bool LibraryMatches(const Rule& rule, const char* path);

  Rule rules_[kMaxRules] = {};
  int count_ = 0;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_SIMULATOR_RULES_H_
