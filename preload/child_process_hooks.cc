// Hooks for the ways a process starts another: fork() and posix_spawn[p]()
// (an exec from a vfork() child is noted by the exec hooks,
// image_end_hooks.cc). Each records the child's pid in the parent's stream
// (kChildProcess), so the report can name a child whose own stream never
// arrived instead of leaving it out without a word. Process starts are
// rare: one instant each, after the call, costs nothing that matters.
#include <alloca.h>
#include <spawn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "preload/child_environment.h"
#include "preload/process_runtime.h"
#include "preload/real_process_functions.h"

namespace rlscope::preload {
namespace {

using ForkFunction = pid_t (*)();
using SpawnFunction = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                              char* const[], char* const[]);

std::atomic<ForkFunction> g_real_fork{nullptr};
std::atomic<SpawnFunction> g_real_posix_spawn{nullptr};
std::atomic<SpawnFunction> g_real_posix_spawnp{nullptr};

int Spawn(SpawnFunction real, pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
          const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  if (real == nullptr) return ENOSYS;
  pid_t child = 0;
  // rlscope's variables put back (child_environment.h), on this frame.
  const size_t bytes = ChildEnvironment::BytesNeeded(envp);
  char* const* completed = bytes == 0 ? envp : ChildEnvironment::Complete(envp, alloca(bytes), bytes);
  const int result = real(&child, file, actions, attributes, argv, completed);
  if (pid != nullptr) *pid = child;
  if (result == 0) NoteChildProcess(child, wire::ChildStart::kSpawned, file);
  return result;
}

}  // namespace

void ResolveRealSpawnFunctions() {
  RealFunction(g_real_fork, "fork");
  RealFunction(g_real_posix_spawn, "posix_spawn");
  RealFunction(g_real_posix_spawnp, "posix_spawnp");
}

}  // namespace rlscope::preload

#define RLSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

RLSCOPE_EXPORT pid_t fork() {
  using namespace rlscope::preload;
  const ForkFunction real = RealFunction(g_real_fork, "fork");
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const pid_t pid = real();
  if (pid > 0) {
    const int saved = errno;
    NoteChildProcess(pid, rlscope::wire::ChildStart::kForked, nullptr);
    errno = saved;
  }
  return pid;
}

RLSCOPE_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                               const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  using namespace rlscope::preload;
  const SpawnFunction real = RealFunction(g_real_posix_spawn, "posix_spawn");
  return Spawn(real, pid, path, actions, attributes, argv, envp);
}

RLSCOPE_EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attributes, char* const argv[], char* const envp[]) {
  using namespace rlscope::preload;
  const SpawnFunction real = RealFunction(g_real_posix_spawnp, "posix_spawnp");
  return Spawn(real, pid, file, actions, attributes, argv, envp);
}
