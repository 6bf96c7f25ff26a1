#!/usr/bin/env python3
"""The settled time of a stream (rlscope_trace.fbs Batch.settled_ns): each
flush tells up to when a process's thread events are complete, so that a
reader may analyse a prefix of the run while it goes on. Every claim must
hold: no event in a later batch begins before it (e2e_support.check_settled),
whatever hook recorded the event and however long the call that holds a
thread back lasts.

  settled_time_e2e_test.py --rlscope BIN [--client BIN --cupti LIB]
      [--python3-12 PYTHON] [SettledTime.test_...]
"""
import os
import re
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, check_settled, main, run_rlscope, scratch_dir  # noqa: E402

# Native calls that last many flushes (sleep, a lock held by another
# thread), callbacks into Python from C (sorted's key), short native calls
# by the thousand, on three threads and in a child process: each kind of
# call the Python hook records at its end, open across flushes.
PYTHON_PROGRAM = textwrap.dedent("""
    import subprocess, sys, threading, time

    def short_calls(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sorted(range(50), key=lambda x: -x)
            "".join(str(i) for i in range(20))

    def sleeper():
        for _ in range(3):
            time.sleep(0.15)
            short_calls(0.05)

    lock = threading.Lock()

    def holder():
        with lock:
            time.sleep(0.3)

    def waiter():
        time.sleep(0.02)
        with lock:
            short_calls(0.1)

    if len(sys.argv) > 1:
        short_calls(0.3)
        time.sleep(0.2)
    else:
        child = subprocess.Popen([sys.executable, __file__, "child"])
        threads = [threading.Thread(target=f) for f in (sleeper, holder, waiter)]
        for t in threads:
            t.start()
        short_calls(0.6)
        for t in threads:
            t.join()
        child.wait()
""")


class SettledTime(unittest.TestCase):
    def profile(self, *options_and_command, env=None):
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--quiet", "--out", out, *options_and_command, env=env, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        return out

    def assert_claims_hold(self, out, least_claims):
        trace_dir = os.path.join(out, "trace")
        claims, checked = check_settled(self, trace_dir)
        # Not an empty check: the runs last many flushes (20 ms each).
        self.assertGreaterEqual(claims, least_claims)
        self.assertGreater(checked, 0)
        # `rlscope dump --check-settled` (format/settled_check.h) agrees.
        counted = [0, 0]
        for name in sorted(os.listdir(trace_dir)):
            result = run_rlscope("dump", "--check-settled", os.path.join(trace_dir, name), timeout=300)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            match = re.search(r": (\d+) settled claims, (\d+) events checked against them, 0 begin too early",
                              result.stdout)
            self.assertIsNotNone(match, result.stdout)
            counted[0] += int(match.group(1))
            counted[1] += int(match.group(2))
        self.assertEqual(counted, [claims, checked])

    def python_program(self, python):
        program = os.path.join(scratch_dir(self), "settled.py")
        with open(program, "w") as f:
            f.write(PYTHON_PROGRAM)
        self.assert_claims_hold(self.profile("--", python, program), least_claims=10)

    def test_python_profile_function(self):
        self.python_program("/usr/bin/python3")

    def test_python_monitoring(self):
        if not ARGS.python3_12:
            self.skipTest("no CPython 3.12 or later here")
        self.python_program(ARGS.python3_12)

    def test_cuda_runtime_and_cupti_calls_on_several_threads(self):
        if not ARGS.client or not ARGS.cupti:
            self.skipTest("no fake CUDA client given")
        # The fake runtime's calls made 2,000 times as long (a launch 40 ms,
        # a copy 100 ms): open across flushes, as a real synchronize is.
        env = dict(os.environ, RLSCOPE_FAKE_CUDART_SCALE="2000")
        out = self.profile("--cupti", ARGS.cupti, "--", ARGS.client, "--steps", "4", "--threads", "2",
                           "--helper-launches", "2", env=env)
        self.assert_claims_hold(out, least_claims=10)

    def test_nvtx_ranges_on_more_threads_than_cpus(self):
        if not ARGS.client or not ARGS.cupti:
            self.skipTest("no fake CUDA client given")
        # Instants (NVTX pushes and pops) by the thousand on 8 threads: each
        # reads its time before it is appended, marked like a call.
        out = self.profile("--cupti", ARGS.cupti, "--", ARGS.client, "--steps", "20000", "--threads", "8",
                           "--domain-steps", "20000")
        self.assert_claims_hold(out, least_claims=3)

    def test_check_settled_usage(self):
        self.assertEqual(run_rlscope("dump", "--check-settled").returncode, 2)
        self.assertEqual(run_rlscope("dump", "--check-setled", "x.rlt").returncode, 2)
        missing = run_rlscope("dump", "--check-settled", os.path.join(scratch_dir(self), "none.rlt"))
        self.assertEqual(missing.returncode, 1)
        self.assertIn("none.rlt", missing.stderr)
        self.assertIn("--check-settled", run_rlscope("dump", "--help").stdout)


if __name__ == "__main__":
    main([], ["--client", "--cupti", "--python3-12"])
