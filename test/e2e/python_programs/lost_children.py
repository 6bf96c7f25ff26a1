"""Children that never stream, or may not (test/e2e/fork_e2e_test.py).

    lost_children.py PIDFILE STATIC_PROGRAM

Starts, in turn:
- a fork() child that SIGKILLs itself at once, and a posix_spawn child and
  a subprocess (vfork + exec) child that do the same (a shell's
  `kill -9 $$`). Each is usually killed before its first flush; on a busy
  machine its first flush (20 ms after its start) may come first, and it
  is then in the report as a process that did not end cleanly;
- a posix_spawn child and a subprocess child running STATIC_PROGRAM, a
  statically linked program: the preload cannot load there, so these
  never stream, however busy the machine;
- a subprocess whose program is found only after failed exec attempts
  along PATH (it streams), and a subprocess of a program that does not
  exist (no child image at all).
Writes "KIND PID" lines to PIDFILE for the first five."""
import os
import signal
import subprocess
import sys


def main():
    pid_file, static_program = sys.argv[1], sys.argv[2]
    lines = []
    pid = os.fork()
    if pid == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    os.waitpid(pid, 0)
    lines.append(f"fork {pid}")

    pid = os.posix_spawn("/bin/sh", ["sh", "-c", "kill -9 $$"], os.environ)
    os.waitpid(pid, 0)
    lines.append(f"spawn {pid}")

    child = subprocess.Popen(["/bin/sh", "-c", "kill -9 $$"])
    child.wait()
    lines.append(f"subprocess {child.pid}")

    pid = os.posix_spawn(static_program, [static_program], os.environ)
    os.waitpid(pid, 0)
    lines.append(f"static_spawn {pid}")

    child = subprocess.Popen([static_program])
    child.wait()
    lines.append(f"static_subprocess {child.pid}")

    env = dict(os.environ, PATH="/nonexistent-a:/nonexistent-b:/usr/bin:/bin")
    subprocess.run(["true"], env=env, check=True)
    try:
        subprocess.run(["rlscope-no-such-program"])
    except FileNotFoundError:
        pass
    with open(pid_file, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("done")


if __name__ == "__main__":
    main()
