"""Children that never stream (test/e2e/fork_e2e_test.py).

    lost_children.py PIDFILE

Starts, in turn: a fork() child that SIGKILLs itself at once, a posix_spawn
child and a subprocess (vfork + exec) child that do the same (a shell's
`kill -9 $$`, before their first flush), a subprocess whose program is
found only after failed exec attempts along PATH (it streams), and a
subprocess of a program that does not exist (no child image at all).
Writes "KIND PID" lines to PIDFILE for the children that were killed."""
import os
import signal
import subprocess
import sys


def main():
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

    env = dict(os.environ, PATH="/nonexistent-a:/nonexistent-b:/usr/bin:/bin")
    subprocess.run(["true"], env=env, check=True)
    try:
        subprocess.run(["rlscope-no-such-program"])
    except FileNotFoundError:
        pass
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(lines) + "\n")
    print("done")


if __name__ == "__main__":
    main()
