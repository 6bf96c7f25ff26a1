#!/usr/bin/env python3
"""Records lost mid-run (a thread's ring full while the collector stalls,
as on a busy machine) cost the breakdown the hole they leave, never the
rest of the run: an operation whose pop was lost must not stay open to the
end. The collector is stopped (SIGSTOP) while steady_rollouts.py runs, so
its ring overflows; the env steps after the hole must still be steps of
their own length, and the explicit operation around them (its pop carries
a token) must still end where the program left it.

  lost_records_e2e_test.py --rlscope BIN --python PYTHON [unittest args]
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope, scratch_dir  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "steady_rollouts.py")
RUN_SECONDS = 3.0
# Long enough for the program to fill its 1 MiB ring many times over (it
# makes ~10^5-10^6 records a second), short enough to leave most of the run
# after the hole.
STALL_SECONDS = 0.6
# An env step takes ~0.1-1 ms; one open across the hole and beyond would
# take seconds. The bound leaves room for a busy machine's preemptions.
MAX_STEP_S = 0.25


def wait_for_trace(out, deadline_s=60):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        traces = glob.glob(os.path.join(out, "trace", "*.rlt"))
        if traces and os.path.getsize(traces[0]) > 4096:
            return True
        time.sleep(0.01)
    return False


class RecordsLostMidRun(unittest.TestCase):
    def profile_with_stall(self):
        directory = scratch_dir(self)
        out = os.path.join(directory, "run")
        with open(os.path.join(directory, "stderr"), "w") as stderr:
            rlscope = subprocess.Popen([ARGS.rlscope, "run", "--out", out, "--", ARGS.python, PROGRAM,
                                        str(RUN_SECONDS)], stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            self.assertTrue(wait_for_trace(out), "no trace data within 60 s")
            time.sleep(0.3)
            os.kill(rlscope.pid, signal.SIGSTOP)
            time.sleep(STALL_SECONDS)
            os.kill(rlscope.pid, signal.SIGCONT)
            stdout, _ = rlscope.communicate(timeout=300)
        finally:
            if rlscope.poll() is None:
                os.kill(rlscope.pid, signal.SIGCONT)
                rlscope.kill()
                rlscope.wait()
        if rlscope.returncode != 0:
            with open(os.path.join(directory, "stderr")) as f:
                self.fail(f"rlscope run exited {rlscope.returncode}: {f.read()[-3000:]}")
        truth = json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        exported = run_rlscope("export", out, "--chrome", os.path.join(directory, "trace.json"), timeout=300)
        self.assertEqual(exported.returncode, 0, exported.stderr)
        with open(os.path.join(directory, "trace.json")) as f:
            trace = json.load(f)["traceEvents"]
        return truth, report, trace

    def test_operations_after_the_hole_are_intact(self):
        truth, report, trace = self.profile_with_stall()
        process = next(p for p in report["processes"] if any("steady_rollouts.py" in a for a in p["argv"]))
        # The stall must have cost records, or this test tests nothing.
        self.assertGreater(process["dropped_events"], 0,
                           f"no records were lost in a {STALL_SECONDS} s collector stall: the ring never filled")
        self.assertFalse([p for p in process["problems"] if "still open" in p], process["problems"])
        operations = [e for e in trace if e.get("cat") == "operation" and e.get("pid") == process["pid"]]
        steps = [e for e in operations if e["name"] == "simulation" and e.get("args", {}).get("inferred")]
        rollouts = [e for e in operations if e["name"] == "rollouts"]
        self.assertEqual(len(rollouts), 1, rollouts)
        rollout_end_us = rollouts[0]["ts"] + rollouts[0]["dur"]
        longest = max(steps, key=lambda e: e["dur"])
        print(f"\n{process['dropped_events']} records lost; {len(steps)} env steps, longest "
              f"{longest['dur'] / 1e3:.1f} ms; the rollouts {rollouts[0]['dur'] / 1e6:.2f} s "
              f"(the program: {truth['seconds']:.2f} s)", file=sys.stderr)
        self.assertLess(longest["dur"] / 1e6, MAX_STEP_S, f"an env step spans the hole: {longest}")
        # Steps go on to the end of the rollouts: the last one ends near it.
        last_step_end_us = max(e["ts"] + e["dur"] for e in steps)
        self.assertLess(rollout_end_us - last_step_end_us, MAX_STEP_S * 1e6)
        # The tokened explicit operation was open across the hole and its pop came.
        self.assertGreater(rollouts[0]["dur"] / 1e6, 0.8 * truth["seconds"])


if __name__ == "__main__":
    main(extra_arguments=["--python"])
