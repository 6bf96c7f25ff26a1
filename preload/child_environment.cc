#include "child_environment.h"

#include <cstdint>
#include <cstring>

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
constexpr size_t kMaxVariables = 32;
constexpr size_t kArenaBytes = 16384;
Variable g_variables[kMaxVariables];
size_t g_variable_count = 0;
char g_arena[kArenaBytes];
size_t g_arena_used = 0;

constexpr char kPythonDirSuffix[] = "/share/rlscope/python";

size_t NameLength(const char* entry) {
  const char* equals = strchr(entry, '=');
  return equals != nullptr ? static_cast<size_t>(equals - entry) + 1 : 0;
}

void Add(const char* name_with_equals, const char* value, size_t value_length, Merge merge) {
  const size_t name_length = strlen(name_with_equals);
  if (g_variable_count == kMaxVariables || g_arena_used + name_length + value_length + 1 > kArenaBytes) return;
  char* entry = g_arena + g_arena_used;
  memcpy(entry, name_with_equals, name_length);
  memcpy(entry + name_length, value, value_length);
  entry[name_length + value_length] = '\0';
  g_arena_used += name_length + value_length + 1;
  g_variables[g_variable_count++] = {entry, name_length, merge};
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

const char* FindEntry(char* const* envp, const Variable& variable) {
  if (envp == nullptr) return nullptr;
  for (char* const* entry = envp; *entry != nullptr; ++entry) {
    if (strncmp(*entry, variable.entry, variable.name_length) == 0) return *entry;
  }
  return nullptr;
}

// The element this variable contributes to a ':'-list (its value).
const char* OwnValue(const Variable& variable) { return variable.entry + variable.name_length; }

// Bytes of the merged "NAME=ours:theirs" for a present entry lacking ours;
// 0 when it needs no change.
size_t MergedBytes(const Variable& variable, const char* present) {
  if (variable.merge != Merge::kPrependPath) return 0;
  const char* value = present + variable.name_length;
  const char* own = OwnValue(variable);
  const size_t own_length = strlen(own);
  if (ListHas(value, own, own_length)) return 0;
  return variable.name_length + own_length + (*value != '\0' ? 1 + strlen(value) : 0) + 1;
}

}  // namespace

void ChildEnvironment::CaptureAtStart(char* const* environment, const char* library_path) {
  g_variable_count = 0;
  g_arena_used = 0;
  if (environment == nullptr) return;
  const size_t library_length = library_path != nullptr ? strlen(library_path) : 0;
  for (char* const* at = environment; *at != nullptr; ++at) {
    const char* entry = *at;
    const size_t name_length = NameLength(entry);
    if (name_length == 0) continue;
    const char* value = entry + name_length;
    if (strncmp(entry, "RLSCOPE_", 8) == 0) {
      char name[128];
      if (name_length >= sizeof(name)) continue;
      memcpy(name, entry, name_length);
      name[name_length] = '\0';
      Add(name, value, strlen(value), Merge::kKeep);
    } else if ((strncmp(entry, "CUDA_INJECTION64_PATH=", name_length) == 0 ||
                strncmp(entry, "NVTX_INJECTION64_PATH=", name_length) == 0) &&
               library_length > 0 && strcmp(value, library_path) == 0) {
      Add(strncmp(entry, "CUDA", 4) == 0 ? "CUDA_INJECTION64_PATH=" : "NVTX_INJECTION64_PATH=", value, strlen(value),
          Merge::kKeep);
    } else if (strncmp(entry, "PYTHONPATH=", name_length) == 0) {
      // Our sitecustomize directory, wherever the launcher put it.
      for (const char* element = value; *element != '\0';) {
        const size_t length = strcspn(element, ":");
        const size_t suffix = sizeof(kPythonDirSuffix) - 1;
        if (length > suffix && memcmp(element + length - suffix, kPythonDirSuffix, suffix) == 0) {
          Add("PYTHONPATH=", element, length, Merge::kPrependPath);
          break;
        }
        element += length;
        if (*element != '\0') ++element;
      }
    }
  }
  if (library_length > 0) Add("LD_PRELOAD=", library_path, library_length, Merge::kPrependPath);
}

size_t ChildEnvironment::BytesNeeded(char* const* envp) {
  if (g_variable_count == 0) return 0;
  size_t count = 0;
  if (envp != nullptr) {
    while (envp[count] != nullptr) ++count;
  }
  size_t added = 0, strings = 0;
  for (size_t i = 0; i < g_variable_count; ++i) {
    const char* present = FindEntry(envp, g_variables[i]);
    if (present == nullptr) {
      ++added;
    } else {
      strings += MergedBytes(g_variables[i], present);
    }
  }
  if (added == 0 && strings == 0) return 0;
  const size_t bytes = (count + added + 1) * sizeof(char*) + strings;
  return bytes <= kMaxBytes ? bytes : 0;
}

char* const* ChildEnvironment::Complete(char* const* envp, void* scratch, size_t bytes) {
  char** out = static_cast<char**>(scratch);
  size_t count = 0;
  if (envp != nullptr) {
    while (envp[count] != nullptr) ++count;
  }
  char* strings = static_cast<char*>(scratch) + bytes;  // Filled downwards.
  size_t used = 0;
  for (size_t i = 0; i < count; ++i) out[used++] = envp[i];
  for (size_t v = 0; v < g_variable_count; ++v) {
    const Variable& variable = g_variables[v];
    const char* present = FindEntry(envp, variable);
    if (present == nullptr) {
      out[used++] = const_cast<char*>(variable.entry);  // exec only reads it.
      continue;
    }
    const size_t merged_bytes = MergedBytes(variable, present);
    if (merged_bytes == 0) continue;
    strings -= merged_bytes;
    const char* theirs = present + variable.name_length;
    const char* own = OwnValue(variable);
    char* at = strings;
    memcpy(at, variable.entry, variable.name_length);
    at += variable.name_length;
    memcpy(at, own, strlen(own));
    at += strlen(own);
    if (*theirs != '\0') {
      *at++ = ':';
      memcpy(at, theirs, strlen(theirs));
      at += strlen(theirs);
    }
    *at = '\0';
    for (size_t i = 0; i < count; ++i) {
      if (out[i] == present) out[i] = strings;
    }
  }
  out[used] = nullptr;
  return out;
}

}  // namespace rlscope::preload
