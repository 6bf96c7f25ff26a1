#!/usr/bin/env python3
"""The preload looks up the libc functions behind its process hooks (fork,
posix_spawn[p], execve, execvpe, _exit, _Exit) at start-up, not on their
first call, which may come from a vfork() child or a signal handler where
dlsym must not run.

The loader's LD_DEBUG=bindings trace shows every symbol lookup, dlsym's
included (LD_BIND_NOW puts the program's own bindings at start-up too): a
Python program marks the start of its main code on stderr and then forks,
spawns, execs and exits; no lookup of those names by the preload may come
after the mark.

  real_process_functions_test.py PYTHON PRELOAD
"""
import os
import re
import subprocess
import sys

MARK = "RLSCOPE-TEST-MAIN"
NAMES = ("fork", "posix_spawn", "posix_spawnp", "execve", "execvpe", "_exit", "_Exit")
PROGRAM = f"""
import os
os.write(2, b"{MARK}\\n")
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
os.waitpid(os.posix_spawn("/bin/true", ["true"], {{}}), 0)
os.waitpid(os.posix_spawnp("true", ["true"], {{}}), 0)
pid = os.fork()
if pid == 0:
    os.execve("/bin/true", ["true"], {{}})
os.waitpid(pid, 0)
"""


def main():
    python, preload = sys.argv[1], sys.argv[2]
    env = dict(os.environ, LD_PRELOAD=preload, LD_DEBUG="bindings", LD_BIND_NOW="1")
    env.pop("RLSCOPE_SOCKET", None)  # The look-ups happen recording or not.
    done = subprocess.run([python, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"the program failed ({done.returncode}):\n{done.stderr[-2000:]}")
    lines = done.stderr.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == MARK]
    if not marks:
        sys.exit("no start mark in the program's stderr")
    by_preload = re.compile(r"binding file (\S+) \[\d+\] to \S+ \[\d+\]: normal symbol `([^']+)'")
    late = []
    for line in lines[marks[0] + 1:]:
        match = by_preload.search(line)
        if match and os.path.basename(match.group(1)) == os.path.basename(preload) and match.group(2) in NAMES:
            late.append(line.strip())
    if late:
        sys.exit("the preload looked up process functions on their first call:\n" + "\n".join(late))
    print("ok")


if __name__ == "__main__":
    main()
