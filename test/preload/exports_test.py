#!/usr/bin/env python3
"""The preload's dynamic symbol table is a contract with the dynamic linker:

- every CUDA runtime hook is exported as NAME@@libcudart.so.13, so it binds
  references to CUDA 13's runtime and nothing else;
- glibc interposers (pthread_create, _exit, exec*, fork, posix_spawn[p], dlopen/dlsym/dlvsym, sigaction,
  signal, sigset) and
  NVTX's injection entry are unversioned, so they satisfy references of any version;
- nothing else is exported (no libstdc++ or FlatBuffers symbols leak);
- with NVIDIA's libcudart.so.13 at hand: for every base function hooked,
  each per-thread-stream variant (_ptsz/_ptds) it exports is hooked too.

  exports_test.py PRELOAD [LIBCUDART]
"""
import re
import subprocess
import sys

UNVERSIONED = {"pthread_create", "_exit", "_Exit", "execve", "execv", "execvp", "execvpe", "execl", "execlp",
               "execle", "InitializeInjectionNvtx2", "InitializeInjection", "rlscope_python_attach", "rlscope_python_attach_thread",
               "rlscope_python_monitoring_prepare",
               "rlscope_operation_push", "rlscope_operation_pop", "rlscope_capture_set", "dlopen", "dlsym", "dlvsym",
               "sigaction", "signal", "sigset", "fork", "posix_spawn", "posix_spawnp"}


def defined_symbols(library):
    output = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", library], check=True,
                            capture_output=True, text=True).stdout
    symbols = {}
    for line in output.splitlines():
        fields = line.split()
        if len(fields) != 3 or fields[1] not in "TtWi":
            continue
        name, _, version = fields[2].partition("@")
        symbols[name] = version.lstrip("@")
    return symbols


def main():
    preload = defined_symbols(sys.argv[1])
    failures = []
    hooks = {name for name in preload if name.startswith(("cuda", "__cuda"))}
    if not hooks:
        failures.append("no CUDA hooks exported")
    for name in sorted(hooks):
        if preload[name] != "libcudart.so.13":
            failures.append(f"{name} has version '{preload[name]}', expected libcudart.so.13")
    for name in sorted(set(preload) - hooks):
        if name == "libcudart.so.13":
            continue  # The version definition itself.
        if name not in UNVERSIONED:
            failures.append(f"unexpected export {name}")
        elif preload[name]:
            failures.append(f"{name} must be unversioned, has '{preload[name]}'")
    for name in sorted(UNVERSIONED - set(preload)):
        failures.append(f"missing export {name}")
    if len(sys.argv) > 2:
        runtime = defined_symbols(sys.argv[2])
        bases = {re.sub(r"_(ptsz|ptds)$", "", name) for name in hooks}
        for name in sorted(runtime):
            base = re.sub(r"_(ptsz|ptds)$", "", name)
            if base != name and base in bases and name not in hooks:
                failures.append(f"{base} is hooked but its variant {name} is not")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(hooks)} CUDA hooks, {len(set(preload) - hooks)} other exports checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
