#include "preload/simulator_hooks.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "preload/elf_image.h"
#include "preload/got_patcher.h"
#include "preload/loader_gate.h"
#include "preload/problem_notice.h"
#include "preload/raw_log.h"
#include "preload/recorder.h"
#include "preload/simulator_rules.h"
#include "preload/string_table.h"
#include "preload/trampoline.h"

namespace rlscope::preload {

namespace {

// One loaded object as dl_iterate_phdr showed it. `name` and `phdr` belong
// to the loader and stay valid while the object is loaded.
struct LoadedObject {
  uintptr_t base;
  const ElfW(Phdr) * phdr;
  int phnum;
  const char* name;
  uintptr_t low, high;  // Span of its PT_LOAD segments.
  ElfImage Image() const { return ElfImage(base, phdr, phnum, name); }
  bool Contains(uintptr_t address) const { return address >= low && address < high; }
};

struct LoaderCounters {
  unsigned long long adds = 0;
  unsigned long long subs = 0;
  bool operator==(const LoaderCounters& other) const { return adds == other.adds && subs == other.subs; }
};

// An object already seen; `candidates` == 0 means it imports nothing any
// rule could match, so it never needs another look; kNotScanned, that it
// was loaded while no library it could call was, so it was not scanned yet.
constexpr int kNotScanned = -1;
// kNotLinked: a library linked against none of the hooked libraries loaded
// when it was looked at; looked at again when another one is loaded.
constexpr int kNotLinked = -2;
struct KnownObject {
  uintptr_t base;
  std::string name;
  int candidates;
};

// constinit, all of them: a dynamic initializer of g_rules running after
// the preload's constructor (the link order decides) would wipe the rules
// the constructor installed.
constinit SimulatorRules g_rules;  // Immutable once g_installed is set.
constinit std::atomic<bool> g_installed{false};
constinit std::atomic<int> g_patched_slots{0};
constinit std::atomic<bool> g_failure_logged{false};

// Guards everything below. Held only around dl_iterate_phdr (the loader's
// write lock, never its main lock) and our own memory: dladdr, dlopen and
// dlsym take the loader's main lock, which a thread running a library
// constructor holds while it may call our dlsym, so they are never called
// under this mutex.
constinit pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
constinit bool g_have_counters = false;
constinit LoaderCounters g_counters;
// Heap-allocated and never freed: hooks may run during static destruction.
constinit std::vector<KnownObject>* g_known = nullptr;
constinit std::vector<uintptr_t>* g_hooked_bases = nullptr;

int ReadCounters(dl_phdr_info* info, size_t size, void* data) {
  auto* counters = static_cast<LoaderCounters*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    counters->adds = info->dlpi_adds;
    counters->subs = info->dlpi_subs;
  }
  return 1;  // The counters are global: the first object is enough.
}

// Runs under the loader's lock: copies only, no dl* call (see header).
int CollectObject(dl_phdr_info* info, size_t, void* data) {
  LoadedObject object{info->dlpi_addr,  info->dlpi_phdr,
                      info->dlpi_phnum, info->dlpi_name != nullptr ? info->dlpi_name : "",
                      UINTPTR_MAX,      0};
  for (int i = 0; i < object.phnum; ++i) {
    if (object.phdr[i].p_type != PT_LOAD) continue;
    const uintptr_t begin = object.base + object.phdr[i].p_vaddr;
    if (begin < object.low) object.low = begin;
    if (begin + object.phdr[i].p_memsz > object.high) object.high = begin + object.phdr[i].p_memsz;
  }
  static_cast<std::vector<LoadedObject>*>(data)->push_back(object);
  return 0;
}

bool StartsWith(const char* text, const char* prefix) { return strncmp(text, prefix, strlen(prefix)) == 0; }

// libc, ld.so and the vDSO never call a simulator; scanning them is waste.
bool IsSystemObject(const char* path) {
  const char* slash = strrchr(path, '/');
  const char* base = slash != nullptr ? slash + 1 : path;
  return StartsWith(base, "libc.so") || StartsWith(base, "ld-linux") || StartsWith(base, "ld64.so") ||
         StartsWith(base, "linux-vdso") || StartsWith(base, "linux-gate");
}

// EventKindOf: what a call hooked by a rule of `kind` records.
wire::EventKind EventKindOf(SimulatorRules::Kind kind) {
  switch (kind) {
    case SimulatorRules::Kind::kBackend: return wire::EventKind::kBackendCall;
    case SimulatorRules::Kind::kCommunication: return wire::EventKind::kCommunicationCall;
    default: return wire::EventKind::kSimulatorCall;
  }
}

// The policy for one refresh: hook imports that are bound (or, lazily
// unbound, would bind) to a function some rule names in a simulator library.
class SimulatorPolicy : public GotPatcher::Policy {
 public:
  SimulatorPolicy(const std::vector<LoadedObject>& objects, const std::vector<const LoadedObject*>& simulators)
      : objects_(objects), simulators_(simulators) {}

  // The object about to be patched is the main program (backend rules
  // apply to its imports only).
  void set_caller_is_program(bool caller_is_program) { caller_is_program_ = caller_is_program; }

  bool Wants(const char* symbol_name) override { return g_rules.SymbolMayMatch(symbol_name, caller_is_program_); }

  void* Replacement(const ElfImage& image, const ElfImage::Import& import, void* current) override {
    if (current == nullptr || Trampolines::IsStub(current)) return nullptr;
    const auto value = reinterpret_cast<uintptr_t>(current);
    void* real = nullptr;
    SimulatorRules::Kind kind = SimulatorRules::Kind::kNone;
    const LoadedObject* owner = Owner(value);
    if (owner != nullptr && IsSimulator(owner)) {
      kind = g_rules.Match(owner->name, import.name, caller_is_program_);
      if (kind != SimulatorRules::Kind::kNone) real = current;
    } else if (image.Contains(value) && !import.defined_here) {
      // A lazy binding not resolved yet: the slot still points into the
      // importer's PLT. Bind it the way the loader would, to the first
      // hooked library (in load order) that defines the symbol.
      real = reinterpret_cast<void*>(DefinitionInSimulators(import.name, &kind));
    }
    return real != nullptr ? Trampolines::For(real, import.name, EventKindOf(kind)) : nullptr;
  }

 private:
  const LoadedObject* Owner(uintptr_t address) const {
    for (const LoadedObject& object : objects_) {
      if (object.Contains(address)) return &object;
    }
    return nullptr;
  }
  bool IsSimulator(const LoadedObject* object) const {
    for (const LoadedObject* simulator : simulators_) {
      if (simulator == object) return true;
    }
    return false;
  }
  uintptr_t DefinitionInSimulators(const char* name, SimulatorRules::Kind* kind) const {
    for (const LoadedObject* simulator : simulators_) {
      *kind = g_rules.Match(simulator->name, name, caller_is_program_);
      if (*kind == SimulatorRules::Kind::kNone) continue;
      if (const uintptr_t address = simulator->Image().Definition(name)) return address;
    }
    *kind = SimulatorRules::Kind::kNone;
    return 0;
  }

  const std::vector<LoadedObject>& objects_;
  const std::vector<const LoadedObject*>& simulators_;
  bool caller_is_program_ = false;
};

KnownObject* FindKnown(const LoadedObject& object) {
  for (KnownObject& known : *g_known) {
    if (known.base == object.base && known.name == object.name) return &known;
  }
  return nullptr;
}

// The object holding this code: the preload (or, in unit tests, the test
// program, which is the main program and so still patched).
bool IsSelf(const LoadedObject& object, size_t index) {
  return index != 0 && object.Contains(reinterpret_cast<uintptr_t>(&SimulatorHooks::Refresh));
}

// RefreshLocked: one pass over the loaded objects. g_mutex held.
//
// Which objects are scanned: the main program calls into every hooked
// library (simulator, backend and communication rules), every other object
// only into the simulator and communication libraries it is linked against
// (DT_NEEDED; what it reaches by dlsym is ForLookup's). An object with no
// such library loaded is not scanned at all (kNotScanned) until one is: a Python process loads
// hundreds of framework libraries, libtorch among them (a backend
// library), and scanning their relocations for calls that cannot be
// hooked cost tens of milliseconds of the program's start-up.
void RefreshLocked(const LoaderCounters& counters) {
  std::vector<LoadedObject> objects;
  objects.reserve(64);
  IterateLoadedObjects(&CollectObject, &objects);

  std::vector<const LoadedObject*> hooked;      // What the main program's calls may go to.
  std::vector<const LoadedObject*> simulators;  // What every other object's calls may go to.
  bool new_hooked = false, new_simulator = false;
  std::vector<uintptr_t> hooked_bases;
  for (const LoadedObject& object : objects) {
    if (!g_rules.LibraryMatches(object.name)) continue;
    const bool simulator = g_rules.HookedFromEveryObject(object.name);
    hooked.push_back(&object);
    if (simulator) simulators.push_back(&object);
    hooked_bases.push_back(object.base);
    bool seen = false;
    for (uintptr_t base : *g_hooked_bases) seen = seen || base == object.base;
    new_hooked = new_hooked || !seen;
    new_simulator = new_simulator || (simulator && !seen);
  }
  *g_hooked_bases = hooked_bases;
  // After an unload, an address may now hold another object or a re-loaded
  // copy with a fresh GOT: objects with candidates are looked at again.
  const bool unloaded = !g_have_counters || counters.subs != g_counters.subs;

  SimulatorPolicy program_policy(objects, hooked);
  program_policy.set_caller_is_program(true);
  // A communication library is called by the objects linked against it
  // (DT_NEEDED): only those are scanned for it. Every torch program loads
  // gloo or NCCL, and scanning every object's imports for them cost ~20 ms
  // of start-up. A simulator's callers may bind to it lazily without
  // linking against it (a plugin loaded first, the simulator later with
  // RTLD_GLOBAL), so every object is scanned for simulators.
  std::vector<std::string> simulator_files;  // Empty: not a communication library.
  for (const LoadedObject* simulator : simulators) {
    const char* soname = simulator->Image().Soname();
    const char* slash = strrchr(simulator->name, '/');
    simulator_files.push_back(!g_rules.CommunicationLibrary(simulator->name) ? ""
                              : soname[0] != '\0'                            ? soname
                              : slash != nullptr                             ? slash + 1
                                                                             : simulator->name);
  }
  std::vector<KnownObject> still_loaded;
  for (size_t i = 0; i < objects.size(); ++i) {
    const LoadedObject& object = objects[i];
    if (IsSystemObject(object.name) || IsSelf(object, i) || g_rules.HookedFromEveryObject(object.name)) continue;
    if (i != 0 && object.name[0] == '\0') continue;  // Nameless and not the program: the vDSO.
    const bool program = i == 0;
    const bool new_target = program ? new_hooked : new_simulator;
    KnownObject* known = FindKnown(object);
    int candidates = known != nullptr ? known->candidates : kNotScanned;
    // Which libraries a non-program object links against is looked at when
    // it is new, and again only when a hooked library is loaded or unloaded.
    const bool look = program ? candidates == kNotScanned || (candidates > 0 && (new_target || unloaded))
                              : candidates == kNotScanned || (candidates != 0 && (new_target || unloaded));
    if (look) {
      const ElfImage image = object.Image();
      std::vector<const LoadedObject*> linked;
      if (!program) {
        for (size_t s = 0; s < simulators.size(); ++s) {
          if (simulator_files[s].empty() || image.Needs(simulator_files[s].c_str())) linked.push_back(simulators[s]);
        }
        if (linked.empty()) candidates = kNotLinked;
      }
      SimulatorPolicy library_policy(objects, linked);
      if (!(program ? hooked : linked).empty()) {
        const GotPatcher::Result result = GotPatcher::Patch(image, program ? program_policy : library_policy);
        candidates = result.candidates;
        g_patched_slots.fetch_add(result.patched, std::memory_order_relaxed);
        if (result.failed > 0 && !g_failure_logged.exchange(true)) {
          ReportProblem("simulator-got",
                        "simulator hooks: could not write %d GOT slot(s) of %s; those calls are not recorded",
                        result.failed, object.name[0] != '\0' ? object.name : "the program");
        }
      }
    }
    still_loaded.push_back(KnownObject{object.base, object.name, candidates});
  }
  *g_known = std::move(still_loaded);
  g_counters = counters;
  g_have_counters = true;
}

// fork() while another thread holds g_mutex would leave the child's copy
// locked forever: hold it across the fork instead.
void LockForFork() { pthread_mutex_lock(&g_mutex); }
void UnlockAfterFork() { pthread_mutex_unlock(&g_mutex); }

}  // namespace

void SimulatorHooks::Install(const char* extra_rules) {
  pthread_mutex_lock(&g_mutex);
  const bool first = g_known == nullptr;
  if (first) {
    g_known = new std::vector<KnownObject>();
    g_hooked_bases = new std::vector<uintptr_t>();
    g_rules.AddDefaults();
    g_rules.AddList(extra_rules);
    g_rules.AddList(getenv("RLSCOPE_BACKEND"), SimulatorRules::Kind::kBackend);
    g_rules.AddList(getenv("RLSCOPE_COMM"), SimulatorRules::Kind::kCommunication);
  }
  pthread_mutex_unlock(&g_mutex);
  if (!first) return;
  pthread_atfork(&LockForFork, &UnlockAfterFork, &UnlockAfterFork);
  g_installed.store(true, std::memory_order_release);
  Refresh();
}

bool SimulatorHooks::Installed() { return g_installed.load(std::memory_order_acquire); }

void SimulatorHooks::Refresh() {
  if (!Installed()) return;
  LoaderCounters counters;
  IterateLoadedObjects(&ReadCounters, &counters);
  pthread_mutex_lock(&g_mutex);
  const bool changed = !g_have_counters || !(counters == g_counters);
  // Scanning every new object's relocations takes milliseconds when a
  // framework loads hundreds of libraries: rlscope's time on the program's
  // thread, timed so the correction removes it.
  const MarkScope open_call(ThreadBuffer::kOpenOther, changed);  // The installation's record begins in the past.
  const uint64_t begin = changed ? NowTicks() : 0;
  if (changed) RefreshLocked(counters);
  pthread_mutex_unlock(&g_mutex);
  if (changed && g_recording && !t_state.untraced) {
    Record(wire::EventKind::kProfilerOverhead, StringTable::Intern("simulator hook installation"), begin, NowTicks());
  }
}

bool SimulatorHooks::NameMayBeHooked(const char* symbol) {
  return Installed() && symbol != nullptr && g_rules.SymbolMayMatch(symbol);
}

void* SimulatorHooks::ForLookup(void* address, const char* symbol) {
  if (address == nullptr || symbol == nullptr || !Installed() || Trampolines::IsStub(address)) return address;
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return address;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&SimulatorHooks::ForLookup), &self) != 0 && self.dli_fbase == info.dli_fbase) {
    return address;  // One of our own definitions (dlsym(h, "dlsym"), say).
  }
  const SimulatorRules::Kind kind = g_rules.Match(info.dli_fname, symbol, /*caller_is_program=*/false);
  if (kind == SimulatorRules::Kind::kNone) return address;
  void* stub = Trampolines::For(address, symbol, EventKindOf(kind));
  return stub != nullptr ? stub : address;
}

int SimulatorHooks::PatchedSlots() { return g_patched_slots.load(std::memory_order_relaxed); }

void InstallSimulatorHooks() { SimulatorHooks::Install(getenv("RLSCOPE_SIM")); }

}  // namespace rlscope::preload
