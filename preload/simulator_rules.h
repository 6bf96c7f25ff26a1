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
  static constexpr int kMaxRules = 32;
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

  enum class Kind { kNone, kSimulator, kBackend };

  // AddDefaults: appends kDefaults and kBackendDefaults.
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
  // (simulator or backend).
  bool LibraryMatches(const char* path) const;
  // SimulatorLibrary: whether `path` is the library of a simulator rule,
  // one whose calls are hooked from every object, not only the program.
  bool SimulatorLibrary(const char* path) const;
  // Matches: whether `symbol` defined by the object at `path` is hooked
  // when called from other objects in general (simulator rules).
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
    Kind kind = Kind::kNone;
  };
  bool Add(const char* entry, size_t length, Kind kind);
  bool SymbolMatches(const Rule& rule, const char* symbol) const;

  Rule rules_[kMaxRules] = {};
  int count_ = 0;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_SIMULATOR_RULES_H_
