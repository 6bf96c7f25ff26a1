// Hooks for the ways a process image ends without running destructors:
// _exit/_Exit (Python's os._exit, multiprocessing workers) and the exec
// family. Each first sends what the process recorded (FinishImage), so its
// last events are not lost. glibc's exit() reaches _exit internally, not
// through these symbols, and is covered by the preload's destructor.
#include <alloca.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <vector>

#include "preload/child_environment.h"
#include "preload/process_runtime.h"
#include "preload/real_process_functions.h"

namespace rlscope::preload {
namespace {

// Collects execl-style variadic arguments (up to the null) into a vector.
std::vector<char*> CollectArgs(const char* first, va_list& args) {
  std::vector<char*> argv{const_cast<char*>(first)};
  while (char* arg = va_arg(args, char*)) argv.push_back(arg);
  argv.push_back(nullptr);
  return argv;
}

// Runs an exec attempt of `program` with environment `envp` (rlscope's
// variables put back: child_environment.h); it only returns if exec failed.
// The completed envp lives in this frame (alloca: no allocation, which a
// vfork() child must not do).
template <typename Exec>
int AroundExec(const char* program, char* const* envp, Exec exec) {
  const size_t bytes = ChildEnvironment::BytesNeeded(envp);
  char* const* completed = bytes == 0 ? envp : ChildEnvironment::Complete(envp, alloca(bytes), bytes);
  FinishImage("exec");
  NoteExecInVforkChild(program, /*failed=*/false);
  const int result = exec(completed);
  const int saved = errno;
  NoteExecInVforkChild(program, /*failed=*/true);
  ResumeAfterFailedExec();
  errno = saved;
  return result;
}

using ExitFunction = void (*)(int);
using ExecveFunction = int (*)(const char*, char* const[], char* const[]);

std::atomic<ExitFunction> g_real_exit{nullptr};
std::atomic<ExitFunction> g_real_exit_upper{nullptr};  // _Exit.
std::atomic<ExecveFunction> g_real_execve{nullptr};
std::atomic<ExecveFunction> g_real_execvpe{nullptr};

}  // namespace

void ResolveRealExecFunctions() {
  RealFunction(g_real_exit, "_exit");
  RealFunction(g_real_exit_upper, "_Exit");
  RealFunction(g_real_execve, "execve");
  RealFunction(g_real_execvpe, "execvpe");
}

}  // namespace rlscope::preload

#define RLSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

RLSCOPE_EXPORT __attribute__((noreturn)) void _exit(int status) {
  using namespace rlscope::preload;
  const ExitFunction real = RealFunction(g_real_exit, "_exit");
  FinishImage("_exit");
  real(status);
  __builtin_unreachable();
}

RLSCOPE_EXPORT __attribute__((noreturn)) void _Exit(int status) {
  using namespace rlscope::preload;
  const ExitFunction real = RealFunction(g_real_exit_upper, "_Exit");
  FinishImage("_exit");
  real(status);
  __builtin_unreachable();
}

RLSCOPE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  using namespace rlscope::preload;
  const ExecveFunction real = RealFunction(g_real_execve, "execve");
  return AroundExec(path, envp, [&](char* const* env) { return real(path, argv, env); });
}

// execv and execvp pass the process's own environment: as execve and
// execvpe with `environ`, so a cleared os.environ is completed too.
RLSCOPE_EXPORT int execv(const char* path, char* const argv[]) {
  using namespace rlscope::preload;
  const ExecveFunction real = RealFunction(g_real_execve, "execve");
  return AroundExec(path, environ, [&](char* const* env) { return real(path, argv, env); });
}

RLSCOPE_EXPORT int execvp(const char* file, char* const argv[]) {
  using namespace rlscope::preload;
  const ExecveFunction real = RealFunction(g_real_execvpe, "execvpe");
  return AroundExec(file, environ, [&](char* const* env) { return real(file, argv, env); });
}

RLSCOPE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  using namespace rlscope::preload;
  const ExecveFunction real = RealFunction(g_real_execvpe, "execvpe");
  return AroundExec(file, envp, [&](char* const* env) { return real(file, argv, env); });
}

RLSCOPE_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  std::vector<char*> argv = rlscope::preload::CollectArgs(arg, args);
  va_end(args);
  return execv(path, argv.data());
}

RLSCOPE_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  std::vector<char*> argv = rlscope::preload::CollectArgs(arg, args);
  va_end(args);
  return execvp(file, argv.data());
}

RLSCOPE_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  std::vector<char*> argv = rlscope::preload::CollectArgs(arg, args);
  char* const* envp = va_arg(args, char* const*);
  va_end(args);
  return execve(path, argv.data(), envp);
}
