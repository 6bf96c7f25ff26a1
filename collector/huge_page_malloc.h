// rlscope's own allocations on transparent huge pages. The report stage
// builds vectors of hundreds of MB; with 4 KiB pages it spends much of its
// time faulting them in (measured on a 2-core VM: `rlscope report` of the
// bundled PPO's run took 7.3-8.9 s, 1.9-2.2 s with these settings).
// glibc asks for huge pages only when told at start-up (the tunable
// glibc.malloc.hugetlb=1, read before main), so rlscope re-executes itself
// once with it set, and puts the variable back as the user had it before
// anything else runs: the programs it launches see the user's environment,
// unchanged. RLSCOPE_HUGE_PAGES=0 turns it off.
#ifndef RLSCOPE_COLLECTOR_HUGE_PAGE_MALLOC_H_
#define RLSCOPE_COLLECTOR_HUGE_PAGE_MALLOC_H_

#include <optional>
#include <string>

namespace rlscope::collector {

// The glibc tunables rlscope sets for itself: transparent huge pages, and freed
// memory kept for reuse (blocks up to 32 MiB from the heap, whose top is
// not given back) rather than unmapped and faulted in afresh; each halved
// the time of `rlscope report` again (scripts/bench/RESULTS.md).
inline constexpr char kMallocTunables[] =
    "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296";
// Set in the re-executed rlscope: the user's GLIBC_TUNABLES, or kUnset.
inline constexpr char kSavedTunablesVariable[] = "RLSCOPE_SAVED_GLIBC_TUNABLES";
inline constexpr char kUnset[] = "\x01unset";

// TunablesWithHugePages: GLIBC_TUNABLES for the re-executed rlscope, given
// the user's value (nothing: unset). The user's own settings come last, so
// where they name the same tunable theirs wins.
std::string TunablesWithHugePages(const std::optional<std::string>& user_value);

// UseHugePageMalloc: on the first call in a process started by the user,
// re-executes /proc/self/exe with the tunable set and does not return
// (returns when that fails, or when RLSCOPE_HUGE_PAGES=0: rlscope then runs
// on as it is). In the re-executed rlscope it restores GLIBC_TUNABLES and
// removes its own variable. Call first thing in main, before any thread.
void UseHugePageMalloc(char** argv);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_HUGE_PAGE_MALLOC_H_
