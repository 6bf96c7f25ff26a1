// SimulatorHooks: routes calls to simulator entry points (SimulatorRules)
// through trampolines, whichever way the program reaches them:
//   - PLT/GOT calls from any other loaded object: GOT slots are patched, at
//     start-up for what is loaded then, later for what dlopen brings in;
//   - dlsym/dlvsym lookups (ctypes resolves functions that way, bypassing
//     LD_PRELOAD and the GOT): the interposer (dl_interposer.h) returns the
//     trampoline instead of the function.
// One function always maps to one trampoline (Trampolines::For).
//
// Never patched: the preload itself, libc, ld.so, the vDSO, and the
// simulator libraries (their internal calls are part of the outer call).
//
// LIMITATIONS (trampoline-level ones are in trampoline.cc):
// - A patched GLOB_DAT slot also serves address-taking: inside a patched
//   object &mj_step is the trampoline, elsewhere the function. Code that
//   compares function pointers across objects may see them differ.
// - A lazy PLT slot not yet resolved is bound to the first simulator
//   library (in load order) defining the symbol's default version, as the
//   loader would unless another object earlier in scope defines it too.
// - GNU indirect functions (STT_GNU_IFUNC) in a simulator library are not
//   hooked when reached through an unresolved slot.
// - Objects loaded by a dlopen whose search depends on its caller (a bare
//   name from an object with DT_RUNPATH, any DT_RPATH in play, $ORIGIN) are
//   patched at the next dlopen/dlsym/dlvsym through the preload, not at once:
//   the real dlopen has to run with the caller's own return address.
// - An object dlclose'd by another thread while a refresh reads its tables
//   can fault the refresh (the loader gives no way to pin it without dl*
//   calls under our lock). A simulator library unloaded and loaded again at
//   a new address takes a new trampoline; the old one is not reused.
// - dlmopen namespaces are not covered (LD_PRELOAD does not reach them).
#ifndef RLSCOPE_PRELOAD_SIMULATOR_HOOKS_H_
#define RLSCOPE_PRELOAD_SIMULATOR_HOOKS_H_

namespace rlscope::preload {

class SimulatorHooks {
 public:
  // Install: the rules are the defaults plus `extra_rules` (RLSCOPE_SIM's
  // comma-separated LIB:PATTERN list; may be null), then every object loaded
  // so far is patched. Once, from the preload's start-up when recording,
  // after StringTable::Init. A no-op (beyond reading the object list) when
  // no simulator library is loaded.
  static void Install(const char* extra_rules);
  static bool Installed();

  // Refresh: patches what was loaded since the last look. Costs one
  // dl_iterate_phdr step when nothing was (the loader's load/unload
  // counters tell). Must not be called from inside a dl_iterate_phdr
  // callback or with a lock held that a loader callback could want.
  static void Refresh();

  // NameMayBeHooked: whether some rule matches `symbol` by name alone: the
  // interposer's cheap test before anything else.
  static bool NameMayBeHooked(const char* symbol);

  // ForLookup: `address` is what a dlsym-style lookup of `symbol` found:
  // its trampoline when it is a hooked simulator function, else `address`.
  static void* ForLookup(void* address, const char* symbol);

  // PatchedSlots: GOT slots written so far (tests, diagnostics).
  static int PatchedSlots();
};

// InstallSimulatorHooks: Install with RLSCOPE_SIM from the environment; the
// preload's start-up calls it.
void InstallSimulatorHooks();

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_SIMULATOR_HOOKS_H_
