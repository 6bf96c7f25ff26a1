"""A tree of N processes made by os.fork() (test/e2e/fork_e2e_test.py).

    fork_tree.py [--load-first DIR] N PIDFILE [LIB]

Process i (the root is 0) appends its pid to PIDFILE, loads LIB with ctypes
when given (a dlopen right after its birth), then forks children 2i+1 and
2i+2 (those below N), each after a few milliseconds of spinning, and waits
for them. The root prints "N processes, F failed".

--load-first DIR: the root first loads every DIR/*.so, so each process has
many loaded objects and its flusher spends longer listing them (what a
torch or jax process looks like to the loader)."""
import ctypes
import glob
import os
import sys
import time


def spin(node, child):
    until = time.monotonic() + ((node * 7 + child * 13) % 25) / 1000
    while time.monotonic() < until:
        pass


def main():
    args = sys.argv[1:]
    if args[:1] == ["--load-first"]:
        for path in sorted(glob.glob(os.path.join(args[1], "*.so"))):
            ctypes.CDLL(path)
        args = args[2:]
    total, pid_file = int(args[0]), args[1]
    library = args[2] if len(args) > 2 else None
    node = 0
    while True:
        with open(pid_file, "a") as f:
            f.write(f"{os.getpid()}\n")
        if library:
            ctypes.CDLL(library)
        children, failed, restarted = [], 0, False
        for c in (1, 2):
            child = 2 * node + c
            if child >= total:
                break
            spin(node, c)
            pid = os.fork()
            if pid == 0:
                node, restarted = child, True
                break
            children.append(pid)
        if restarted:
            continue
        for pid in children:
            _, status = os.waitpid(pid, 0)
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                failed += 1
        if node != 0:
            os._exit(0 if failed == 0 else 1)
        print(f"{total} processes, {failed} failed")
        return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
