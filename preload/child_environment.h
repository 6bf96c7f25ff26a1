// ChildEnvironment: the environment a child of a profiled process gets.
//
// Decision: rlscope's variables are put back into an environment that lost
// them (subprocess.run(cmd, env={}), execve with a minimal envp, a cleared
// os.environ), rather than recording the child as unprofiled. Children of
// an RL run are part of the run (vectorised envs, workers, evaluators
// started with a clean environment), and a child that gets no LD_PRELOAD
// cannot even say that it exists. What is put back: every RLSCOPE_*
// variable this process started with, our library first in LD_PRELOAD,
// our sitecustomize directory first in PYTHONPATH, and
// CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH where they named our
// library. A variable the child's environment sets is kept (only
// LD_PRELOAD and PYTHONPATH are extended), so a program can still point a
// child elsewhere on purpose.
//
// Exec runs in vfork() children too, which share the parent's memory and
// must not allocate: the completed envp is built in caller-provided stack
// memory (BytesNeeded, then Complete) from values copied at start-up.
#ifndef RLSCOPE_PRELOAD_CHILD_ENVIRONMENT_H_
#define RLSCOPE_PRELOAD_CHILD_ENVIRONMENT_H_

#include <cstddef>
#include <string>

namespace rlscope::preload {

class ChildEnvironment {
 public:
  // CaptureAtStart: copies rlscope's variables from `environment` (the
  // process's own, at start-up; it allocates). `library_path`: this
  // library's file. Returns the names of the variables it could not keep,
  // ", "-separated (empty: all kept), for the caller to report.
  static std::string CaptureAtStart(char* const* environment, const char* library_path);
  // CaptureWithin: CaptureAtStart keeping at most `max_variables`
  // variables of `max_bytes` in all (tests; CaptureAtStart sizes them).
  static std::string CaptureWithin(char* const* environment, const char* library_path, size_t max_variables,
                                   size_t max_bytes);
  // BytesNeeded: scratch memory Complete needs for `envp` (with some
  // headroom); 0 when nothing is missing (pass envp on unchanged) or when
  // it would exceed kMaxBytes.
  static size_t BytesNeeded(char* const* envp);
  // Complete: `envp` with rlscope's variables put back, built in `scratch`
  // (BytesNeeded(envp) bytes, pointer-aligned: alloca in the frame that
  // makes the exec call, so it lives until the call). Reads envp once and
  // never writes outside `scratch`: envp may be the live environ, which
  // other threads change while a vfork() child runs. Returns envp
  // unchanged when the completed environment does not fit in `bytes`.
  static char* const* Complete(char* const* envp, void* scratch, size_t bytes);

  // Larger environments pass unchanged (the child may then go unprofiled;
  // the report names it, lost_processes.h): this memory is on the stack.
  static constexpr size_t kMaxBytes = 512 * 1024;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CHILD_ENVIRONMENT_H_
