"""Children started with a scrubbed environment (test/e2e/fork_e2e_test.py).

    scrubbed_env.py PIDFILE

Runs a small Python child four ways, each without rlscope's variables in
the environment it passes: subprocess.run(env={}), subprocess.run with a
minimal env (PATH and HOME only), os.posix_spawn with an empty env, and
subprocess.run after os.environ.clear() (exec with the process's own,
emptied environment). Writes "KIND PID" lines to PIDFILE."""
import os
import subprocess
import sys

CHILD = "import sys; sum(i * i for i in range(20000)); print(sys.argv[1])"


def main():
    lines = []
    for kind, env in (("empty", {}), ("minimal", {"PATH": "/usr/bin:/bin", "HOME": "/"})):
        child = subprocess.Popen([sys.executable, "-c", CHILD, f"scrubbed-{kind}"], env=env)
        child.wait()
        lines.append(f"{kind} {child.pid}")
    pid = os.posix_spawn(sys.executable, [sys.executable, "-c", CHILD, "scrubbed-spawn"], {})
    os.waitpid(pid, 0)
    lines.append(f"spawn {pid}")
    os.environ.clear()
    child = subprocess.Popen([sys.executable, "-c", CHILD, "scrubbed-cleared"])
    child.wait()
    lines.append(f"cleared {child.pid}")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
