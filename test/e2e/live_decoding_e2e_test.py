#!/usr/bin/env python3
"""Decoding the trace while the program runs (collector/live_decoding.h).

`rlscope run` with RLSCOPE_LIVE_DECODING=1 decodes each trace file as the
collector writes it; its report must be byte for byte the one `rlscope
report DIR` makes afterwards from the finished trace, whatever the run:
several processes, corrected (a hand-written calibration, as
attribution_e2e_test.py), a plain trace (--uncompressed-trace, read
whole at the end), or a trace that outgrows the report's memory (the
decoding stops following, and the end of the run decides as it always did).

  live_decoding_e2e_test.py --rlscope BIN --client BIN --cupti LIB
"""
import json
import os
import shutil
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope, scratch_dir  # noqa: E402

REPORT_FILES = ("report.json", "report.txt", "report.html")

# A parent and a child process, each calling Python functions of its own
# for about a second: long enough for the decoding to read the traces
# several times, interleaved.
TWO_PROCESSES = textwrap.dedent("""
    import subprocess, sys, time

    def parent_step(i):
        return sum(j * j for j in range(i % 50))

    def child_step(i):
        return sorted(range(i % 40))

    def loop(seconds, step):
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            step(i)
            i += 1

    if len(sys.argv) > 1:
        loop(0.8, child_step)
    else:
        child = subprocess.Popen([sys.executable, __file__, "child"])
        loop(1.0, parent_step)
        child.wait()
""")


def calibration_file(directory):
    """A calibration that applies on any machine (rlscope_version "test")."""
    path = os.path.join(directory, "calibration.json")
    costs = {"cuda_hook": 400, "nvtx_range": 300, "native_process": 1000, "cupti:cudaLaunchKernel": 2000,
             "cupti:cuLaunchKernel": 1500, "cupti:cudaMemsetAsync": 2000, "cupti:cudaStreamSynchronize": 2000}
    with open(path, "w") as f:
        json.dump({"schema": "rlscope.calibration/1", "rlscope_version": "test", "created_unix_s": 0,
                   "machine": {"cpu": "live decoding test", "kernel": "", "gpu": "", "driver": "",
                               "cuda_runtime": ""},
                   "costs": {site: {"ns": ns} for site, ns in costs.items()}}, f)
    return path


class LiveDecoding(unittest.TestCase):
    def profile(self, *options_and_command, env_extra=None):
        out = os.path.join(scratch_dir(self), "run")
        env = dict(os.environ, RLSCOPE_LIVE_DECODING="1")
        env.update(env_extra or {})
        result = run_rlscope("run", "--quiet", "--out", out, *options_and_command, env=env, timeout=300)
        return out, result

    def decoded_during_run(self, out):
        """meta.json's count of stream bytes decoded while the command ran."""
        with open(os.path.join(out, "meta.json")) as f:
            return json.load(f)["trace_decoded_during_run_bytes"]

    def assert_same_report_afterwards(self, out):
        """The run's report files against `rlscope report`'s of a copy of
        the finished run."""
        again = os.path.join(scratch_dir(self), "again")
        shutil.copytree(out, again, ignore=shutil.ignore_patterns("report.*"))
        result = run_rlscope("report", "--quiet", again, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in REPORT_FILES:
            with open(os.path.join(out, name)) as live, open(os.path.join(again, name)) as after:
                # The run's directory is named in the report; nothing else differs.
                self.assertEqual(live.read().replace(out, again), after.read(), name)

    def test_two_processes(self):
        program = os.path.join(scratch_dir(self), "two_processes.py")
        with open(program, "w") as f:
            f.write(TWO_PROCESSES)
        out, result = self.profile("--", "/usr/bin/python3", program)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            self.assertEqual(len(json.load(f)["processes"]), 2)
        self.assertGreater(self.decoded_during_run(out), 0)
        self.assert_same_report_afterwards(out)

    def test_corrected_cuda_run(self):
        calibration = calibration_file(scratch_dir(self))
        out, result = self.profile("--cupti", ARGS.cupti, "--calibration", calibration, "--", ARGS.client,
                                   "--steps", "3000", "--helper-launches", "3")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            self.assertGreater(json.load(f)["correction"]["removed_ns"], 0)
        self.assertGreater(self.decoded_during_run(out), 0)
        self.assert_same_report_afterwards(out)

    def test_plain_trace(self):
        out, result = self.profile("--uncompressed-trace", "--cupti", ARGS.cupti, "--", ARGS.client, "--steps", "2000")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.decoded_during_run(out), 0)  # Read whole at the end.
        self.assert_same_report_afterwards(out)

    def test_off(self):
        out, result = self.profile("--cupti", ARGS.cupti, "--", ARGS.client, "--steps", "2000",
                                   env_extra={"RLSCOPE_LIVE_DECODING": "0"})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.decoded_during_run(out), 0)

    def test_a_trace_beyond_the_reports_memory_is_refused_as_before(self):
        env_extra = {"RLSCOPE_REPORT_MEMORY": "64K"}
        out, live = self.profile("--cupti", ARGS.cupti, "--", ARGS.client, "--steps", "2000", env_extra=env_extra)
        self.assertEqual(live.returncode, 0, live.stderr)
        self.assertIn("is available; the trace is kept", live.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "report.json")))
        self.assertEqual(self.decoded_during_run(out), 0)  # It let go.
        result = run_rlscope("report", "--quiet", out, env=dict(os.environ, **env_extra), timeout=300)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("is available; the trace is kept", result.stderr)


if __name__ == "__main__":
    main(["--client", "--cupti"])
