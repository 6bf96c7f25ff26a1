#include "preload/child_environment.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace rlscope::preload {

namespace {

// How a variable the child's environment already sets is treated.
enum class Merge {
  kKeep,         // Its own value stands.
  kPrependPath,  // A ':'-list: ours goes first unless it is in it already.
};

struct Variable {
  const char* entry = nullptr;  // "NAME=value", in g_arena.
  size_t name_length = 0;       // Up to and including the '='.
  Merge merge = Merge::kKeep;
};

// Copied at start-up: exec in a vfork() child may read, never allocate.
// The tables are sized from the environment then (the launcher sets one
// RLSCOPE_RULES_<i> per rules file, up to a thousand); the static ones
// serve when that allocation fails.
constexpr size_t kStaticVariables = 32;
constexpr size_t kStaticArenaBytes = 16384;
Variable g_static_variables[kStaticVariables];
char g_static_arena[kStaticArenaBytes];
Variable* g_variables = g_static_variables;
size_t g_variable_capacity = 0;
size_t g_variable_count = 0;
char* g_arena = g_static_arena;
size_t g_arena_bytes = 0;
size_t g_arena_used = 0;

// BytesNeeded's headroom, so an environment that another thread grows a
// little before Complete runs (vfork children) is still completed.
constexpr size_t kSlackEntries = 16;
constexpr size_t kSlackBytes = 1024;

constexpr char kPythonDirSuffix[] = "/share/rlscope/python";

size_t NameLength(const char* entry) {
  const char* equals = strchr(entry, '=');
  return equals != nullptr ? static_cast<size_t>(equals - entry) + 1 : 0;
}

// Add: false when the tables are full (the variable is not kept).
bool Add(const char* name, size_t name_length, const char* value, size_t value_length, Merge merge) {
  if (g_variable_count == g_variable_capacity || g_arena_used + name_length + value_length + 1 > g_arena_bytes) {
    return false;
  }
  char* entry = g_arena + g_arena_used;
  memcpy(entry, name, name_length);
  memcpy(entry + name_length, value, value_length);
  entry[name_length + value_length] = '\0';
  g_arena_used += name_length + value_length + 1;
  g_variables[g_variable_count++] = {entry, name_length, merge};
  return true;
}

// Calls `keep(name, name_length, value, value_length, merge)` for each
// variable a child gets back, most needed first: without LD_PRELOAD a
// child is not profiled at all, so that one goes first, then what finds
// the rest of rlscope (PYTHONPATH, the injection paths), then RLSCOPE_*.
template <typename Keep>
void ForEachToKeep(char* const* environment, const char* library_path, Keep keep) {
  const size_t library_length = library_path != nullptr ? strlen(library_path) : 0;
  if (library_length > 0) keep("LD_PRELOAD=", 11, library_path, library_length, Merge::kPrependPath);
  for (char* const* at = environment; *at != nullptr; ++at) {
    const char* entry = *at;
    const size_t name_length = NameLength(entry);
    if (name_length == 0) continue;
    const char* value = entry + name_length;
    if ((strncmp(entry, "CUDA_INJECTION64_PATH=", name_length) == 0 ||
         strncmp(entry, "NVTX_INJECTION64_PATH=", name_length) == 0) &&
        library_length > 0 && strcmp(value, library_path) == 0) {
      keep(entry, name_length, value, strlen(value), Merge::kKeep);
    } else if (strncmp(entry, "PYTHONPATH=", name_length) == 0) {
      // Our sitecustomize directory, wherever the launcher put it.
      for (const char* element = value; *element != '\0';) {
        const size_t length = strcspn(element, ":");
        const size_t suffix = sizeof(kPythonDirSuffix) - 1;
        if (length > suffix && memcmp(element + length - suffix, kPythonDirSuffix, suffix) == 0) {
          keep(entry, name_length, element, length, Merge::kPrependPath);
          break;
        }
        element += length;
        if (*element != '\0') ++element;
      }
    }
  }
  for (char* const* at = environment; *at != nullptr; ++at) {
    const char* entry = *at;
    const size_t name_length = NameLength(entry);
    if (name_length > 8 && strncmp(entry, "RLSCOPE_", 8) == 0) {
      keep(entry, name_length, entry + name_length, strlen(entry + name_length), Merge::kKeep);
    }
  }
}

// Points the tables at `variables` and `arena` (emptied).
void UseTables(Variable* variables, size_t variable_capacity, char* arena, size_t arena_bytes) {
  if (g_variables != g_static_variables) delete[] g_variables;
  if (g_arena != g_static_arena) delete[] g_arena;
  g_variables = variables;
  g_variable_capacity = variable_capacity;
  g_variable_count = 0;
  g_arena = arena;
  g_arena_bytes = arena_bytes;
  g_arena_used = 0;
}

// Whether the ':'-separated `list` has `element` (LD_PRELOAD also
// separates by spaces).
bool ListHas(const char* list, const char* element, size_t element_length) {
  for (const char* at = list; *at != '\0';) {
    const size_t length = strcspn(at, ": ");
    if (length == element_length && memcmp(at, element, length) == 0) return true;
    at += length;
    if (*at != '\0') ++at;
  }
  return false;
}

// The entry of `entries[0, count)` that sets `variable`, or -1.
ptrdiff_t FindEntry(char* const* entries, size_t count, const Variable& variable) {
  for (size_t i = 0; i < count; ++i) {
    if (strncmp(entries[i], variable.entry, variable.name_length) == 0) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

// The element this variable contributes to a ':'-list (its value).
const char* OwnValue(const Variable& variable) { return variable.entry + variable.name_length; }

// Bytes of the merged "NAME=ours:theirs" for a present entry lacking ours;
// 0 when it needs no change. `theirs_length`: the present value's length,
// measured here once, so the caller sizes and copies with the same number.
size_t MergedBytes(const Variable& variable, const char* present, size_t* theirs_length) {
  if (variable.merge != Merge::kPrependPath) return 0;
  const char* value = present + variable.name_length;
  const char* own = OwnValue(variable);
  const size_t own_length = strlen(own);
  if (ListHas(value, own, own_length)) return 0;
  *theirs_length = strlen(value);
  return variable.name_length + own_length + (*theirs_length != 0 ? 1 + *theirs_length : 0) + 1;
}

// Copies at most `length` bytes of `from`, stopping at its end: a string
// another thread shortened since it was measured is not read past its end.
size_t CopyAtMost(char* to, const char* from, size_t length) {
  size_t copied = 0;
  while (copied < length && from[copied] != '\0') {
    to[copied] = from[copied];
    ++copied;
  }
  return copied;
}

}  // namespace

std::string ChildEnvironment::CaptureAtStart(char* const* environment, const char* library_path) {
  size_t variables = 0, bytes = 0;
  if (environment != nullptr) {
    ForEachToKeep(environment, library_path,
                  [&](const char*, size_t name_length, const char*, size_t value_length, Merge) {
                    ++variables;
                    bytes += name_length + value_length + 1;
                  });
  }
  return CaptureWithin(environment, library_path, variables, bytes);
}

std::string ChildEnvironment::CaptureWithin(char* const* environment, const char* library_path, size_t max_variables,
                                            size_t max_bytes) {
  UseTables(g_static_variables, 0, g_static_arena, 0);
  if (environment == nullptr) return {};
  auto* variables = new (std::nothrow) Variable[max_variables];
  auto* arena = new (std::nothrow) char[max_bytes];
  if (variables != nullptr && arena != nullptr) {
    UseTables(variables, max_variables, arena, max_bytes);
  } else {
    delete[] variables;
    delete[] arena;
    UseTables(g_static_variables, kStaticVariables, g_static_arena, kStaticArenaBytes);
  }
  std::string dropped;
  ForEachToKeep(environment, library_path,
                [&](const char* name, size_t name_length, const char* value, size_t value_length, Merge merge) {
                  if (Add(name, name_length, value, value_length, merge)) return;
                  if (!dropped.empty()) dropped += ", ";
                  dropped.append(name, name_length - 1);
                });
  return dropped;
}

size_t ChildEnvironment::BytesNeeded(char* const* envp) {
  if (g_variable_count == 0) return 0;
  size_t count = 0;
  if (envp != nullptr) {
    while (envp[count] != nullptr) ++count;
  }
  size_t added = 0, strings = 0;
  for (size_t i = 0; i < g_variable_count; ++i) {
    const ptrdiff_t present = FindEntry(envp, count, g_variables[i]);
    size_t theirs_length = 0;
    if (present < 0) {
      ++added;
    } else {
      strings += MergedBytes(g_variables[i], envp[present], &theirs_length);
    }
  }
  if (added == 0 && strings == 0) return 0;
  const size_t bytes = (count + added + 1 + kSlackEntries) * sizeof(char*) + strings + kSlackBytes;
  return bytes <= kMaxBytes ? bytes : 0;
}

// Complete reads `envp` once: its pointers are copied into `scratch` in one
// pass, and everything after works on that copy, never on envp again. In a
// vfork() child (Python's subprocess with env=None calls execv there) the
// parent's other threads keep running and may grow environ or replace an
// entry between BytesNeeded and here, or during this call; every write is
// checked against `bytes` (scratch is on the suspended parent's stack), and
// when the environment no longer fits, it goes on unchanged.
char* const* ChildEnvironment::Complete(char* const* envp, void* scratch, size_t bytes) {
  if (scratch == nullptr || bytes < sizeof(char*)) return envp;
  char** out = static_cast<char**>(scratch);
  char* const end = static_cast<char*>(scratch) + bytes;
  char* strings = end;  // Filled downwards, above out[0, used] (the null).
  size_t used = 0;
  // Room for one more pointer and the terminating null below `strings`.
  const auto room_for_entry = [&] {
    return static_cast<size_t>(strings - static_cast<char*>(scratch)) >= (used + 2) * sizeof(char*);
  };
  if (envp != nullptr) {
    for (size_t i = 0;; ++i) {
      char* entry = envp[i];
      if (entry == nullptr) break;
      if (!room_for_entry()) return envp;
      out[used++] = entry;
    }
  }
  const size_t count = used;
  for (size_t v = 0; v < g_variable_count; ++v) {
    const Variable& variable = g_variables[v];
    const ptrdiff_t present = FindEntry(out, count, variable);
    if (present < 0) {
      if (!room_for_entry()) return envp;
      out[used++] = const_cast<char*>(variable.entry);  // exec only reads it.
      continue;
    }
    size_t theirs_length = 0;
    const size_t merged_bytes = MergedBytes(variable, out[present], &theirs_length);
    if (merged_bytes == 0) continue;
    if (static_cast<size_t>(strings - static_cast<char*>(scratch)) < (used + 1) * sizeof(char*) + merged_bytes) {
      return envp;
    }
    strings -= merged_bytes;
    const char* theirs = out[present] + variable.name_length;
    const char* own = OwnValue(variable);
    char* at = strings;
    memcpy(at, variable.entry, variable.name_length);
    at += variable.name_length;
    const size_t own_length = strlen(own);
    memcpy(at, own, own_length);
    at += own_length;
    if (theirs_length != 0) {
      *at++ = ':';
      at += CopyAtMost(at, theirs, theirs_length);
    }
    *at = '\0';  // At most strings + merged_bytes - 1.
    out[present] = strings;
  }
  out[used] = nullptr;
  return out;
}

}  // namespace rlscope::preload
