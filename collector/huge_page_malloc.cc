#include "collector/huge_page_malloc.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace rlscope::collector {

std::string TunablesWithHugePages(const std::optional<std::string>& user_value) {
  if (!user_value || user_value->empty()) return kMallocTunables;
  return std::string(kMallocTunables) + ":" + *user_value;
}

void UseHugePageMalloc(char** argv) {
  if (const char* saved = getenv(kSavedTunablesVariable)) {
    // The re-executed rlscope: glibc has read the tunable; put back the
    // user's value (setenv keeps its place among the variables).
    if (strcmp(saved, kUnset) == 0) {
      unsetenv("GLIBC_TUNABLES");
    } else {
      setenv("GLIBC_TUNABLES", saved, 1);
    }
    unsetenv(kSavedTunablesVariable);
    return;
  }
  if (const char* off = getenv("RLSCOPE_HUGE_PAGES"); off != nullptr && strcmp(off, "0") == 0) return;
  const char* user = getenv("GLIBC_TUNABLES");
  const std::optional<std::string> user_value = user ? std::optional<std::string>(user) : std::nullopt;
  const std::string tunables = TunablesWithHugePages(user_value);
  if (setenv(kSavedTunablesVariable, user ? user : kUnset, 1) != 0) return;
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) == 0) execv("/proc/self/exe", argv);
  // No re-execution (no /proc, say): run on as started, environment as it was.
  if (user_value) {
    setenv("GLIBC_TUNABLES", user_value->c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
  unsetenv(kSavedTunablesVariable);
}

}  // namespace rlscope::collector
