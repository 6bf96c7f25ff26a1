#!/usr/bin/env python3
"""Processes a run starts: fork storms, children that never stream, children
started with a scrubbed environment. Every process the program starts is in
report.json's processes or named by a problem line; nothing hangs (each
case runs under a deadline, and a hang kills what it left and fails).

  fork_e2e_test.py --rlscope BIN --fork-tree BIN --dlopen-lib LIB
"""
import json
import os
import re
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, scratch_dir  # noqa: E402
from fault_e2e_test import bounded  # noqa: E402  (also makes this process a subreaper)

PYTHON = "/usr/bin/python3"
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs")
# Generous: a fork tree of 200 takes well under a second unprofiled; a hang
# (a child waiting on a lock forever) is what this deadline catches.
DEADLINE_S = 120
TREE_SIZE = 200
LOADED_COPIES = 150


def own_session():
    """preexec_fn: a session of its own, so that the kill after a hang
    (every child's process group) does not take this test down with it."""
    os.setsid()


def profiled(test, command, timeout=DEADLINE_S):
    out = os.path.join(scratch_dir(test), "run")
    run = bounded(test, [ARGS.rlscope, "run", "--quiet", "--out", out, "--", *command], timeout=timeout,
                  preexec_fn=own_session)
    with open(os.path.join(out, "report.json")) as f:
        return run, json.load(f)


def all_problems(report):
    problems = list(report.get("problems", []))
    for process in report["processes"]:
        problems.extend(process.get("problems", []))
    return problems


def unaccounted(report, pids):
    """The pids neither in the report's processes nor named by a problem."""
    present = {process["pid"] for process in report["processes"]}
    named = set()
    for problem in all_problems(report):
        named.update(int(pid) for pid in re.findall(r"process (\d+)", problem))
    return sorted(set(pids) - present - named)


class ForkStorm(unittest.TestCase):
    """A tree of TREE_SIZE fork() children, with and without a dlopen in
    each child at birth: it finishes, and every pid is accounted for."""

    def tree(self, program, extra=()):
        """Runs PROGRAM N PIDFILE EXTRA unprofiled and profiled."""
        pid_file = os.path.join(scratch_dir(self), "pids")
        plain = bounded(self, [*program, str(TREE_SIZE), "/dev/null", *extra], timeout=DEADLINE_S,
                        preexec_fn=own_session)
        run, report = profiled(self, [*program, str(TREE_SIZE), pid_file, *extra])
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertEqual(run.stdout, plain.stdout, run.stderr[-3000:])
        with open(pid_file) as f:
            pids = [int(line) for line in f if line.strip()]
        self.assertEqual(len(pids), TREE_SIZE)
        self.assertEqual(unaccounted(report, pids), [], all_problems(report)[:20])
        # A figure for the log, not an assertion (the machine may be busy).
        name = os.path.basename(program[min(1, len(program) - 1)])
        print(f"\n  {name} {' '.join(extra)}: unprofiled {plain.seconds:.2f} s, "
              f"profiled {run.seconds:.2f} s, {len(report['processes'])} of {TREE_SIZE} processes in the report",
              file=sys.stderr)
        return report

    def test_c_tree(self):
        self.tree([ARGS.fork_tree])

    def test_c_tree_with_dlopen_in_every_child(self):
        self.tree([ARGS.fork_tree], [ARGS.dlopen_lib])

    def many_libraries(self):
        """A directory of LOADED_COPIES copies of a small library: loaded
        first, they make every process's module list as long as a real
        framework's, and so the flusher's walk of it (under the loader's
        lock) long enough for forks to land in it."""
        directory = scratch_dir(self)
        for i in range(LOADED_COPIES):
            shutil.copy(ARGS.dlopen_lib, os.path.join(directory, f"libcopy{i}.so"))
        return directory

    def test_python_tree(self):
        self.tree([PYTHON, os.path.join(PROGRAMS, "fork_tree.py"), "--load-first", self.many_libraries()])

    def test_python_tree_with_dlopen_in_every_child(self):
        self.tree([PYTHON, os.path.join(PROGRAMS, "fork_tree.py"), "--load-first", self.many_libraries()],
                  [ARGS.dlopen_lib])


class LostChildren(unittest.TestCase):
    """A child whose stream never arrives (a static program, which cannot
    load the preload; a child killed before its first flush) is named by a
    problem line, however it was started; a failed exec (PATH search,
    missing program) is not a lost child."""

    def test_children_that_never_stream_are_named(self):
        pid_file = os.path.join(scratch_dir(self), "pids")
        run, report = profiled(self, [PYTHON, os.path.join(PROGRAMS, "lost_children.py"), pid_file,
                                      ARGS.static_program])
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        with open(pid_file) as f:
            children = dict(line.split() for line in f if line.strip())
        self.assertEqual(sorted(children), ["fork", "spawn", "static_spawn", "static_subprocess", "subprocess"])
        lost = [problem for problem in report["problems"] if "sent nothing" in problem]
        processes = {process["pid"]: process for process in report["processes"]}
        static = ARGS.static_program

        def named(pid, how):
            return any(problem.startswith(f"process {pid} ({how} process ") for problem in lost)

        # Never streams, whatever the machine's load.
        for kind, how in (("static_spawn", f"spawned to run {static} by"),
                          ("static_subprocess", f"started (vfork + exec) to run {static} by")):
            pid = int(children[kind])
            self.assertTrue(named(pid, how), (kind, pid, lost))
            self.assertNotIn(pid, processes)
        # Killed at once: named, unless its first flush (20 ms after its
        # start) came first on a busy machine; then it is in the report,
        # as a process that did not end cleanly. Never both, never neither.
        for kind, how in (("fork", "forked by"), ("spawn", "spawned to run /bin/sh by"),
                          ("subprocess", "started (vfork + exec) to run /bin/sh by")):
            pid = int(children[kind])
            if pid in processes:
                self.assertFalse(named(pid, how), (kind, pid, lost))
                self.assertFalse(processes[pid]["ended_cleanly"], (kind, pid))
                print(f"\n  {kind} child {pid} flushed before it was killed (a busy machine)", file=sys.stderr)
            else:
                self.assertTrue(named(pid, how), (kind, pid, lost))
        # Only those: the PATH search's failed attempts and the missing
        # program left no child to expect.
        expected = 5 - sum(int(children[kind]) in processes for kind in ("fork", "spawn", "subprocess"))
        self.assertEqual(len(lost), expected, lost)
        self.assertEqual(unaccounted(report, [int(pid) for pid in children.values()]), [])


class ScrubbedEnvironment(unittest.TestCase):
    """A child started without rlscope's variables in its environment
    (env={}, a minimal env, posix_spawn with an empty env, a cleared
    os.environ) is profiled all the same: rlscope puts them back."""

    def test_children_with_a_scrubbed_environment_are_in_the_report(self):
        pid_file = os.path.join(scratch_dir(self), "pids")
        run, report = profiled(self, [PYTHON, os.path.join(PROGRAMS, "scrubbed_env.py"), pid_file])
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertEqual(run.stdout.split(), ["scrubbed-empty", "scrubbed-minimal", "scrubbed-spawn",
                                              "scrubbed-cleared"])
        with open(pid_file) as f:
            children = dict(line.split() for line in f if line.strip())
        by_pid = {process["pid"]: process for process in report["processes"]}
        for kind, pid in children.items():
            self.assertIn(int(pid), by_pid, (kind, all_problems(report)))
            self.assertIn(f"scrubbed-{kind}", by_pid[int(pid)]["argv"])
            # Its Python ran under rlscope's hook (sitecustomize came back too).
            categories = {row["category"] for thread in by_pid[int(pid)]["threads"] for row in thread["rows"]}
            self.assertIn("Python", categories, (kind, by_pid[int(pid)]["threads"]))


if __name__ == "__main__":
    main(extra_arguments=("--fork-tree", "--dlopen-lib", "--static-program"))
