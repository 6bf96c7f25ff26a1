#!/usr/bin/env python3
"""End-to-end tests of `rlscope validate`: usage errors, the numbers in
validate.json (checked against each other, never against a speed), the
run directories and output files it leaves, failing commands, Ctrl-C.

  validate_e2e_test.py --rlscope BIN [unittest args]
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope, scratch_dir  # noqa: E402

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class Validation:
    """One `rlscope validate ... --out DIR -- COMMAND` in a fresh directory."""

    def __init__(self, test, command, options=(), expect_exit=0):
        self.dir = os.path.join(scratch_dir(test), "validate")
        self.result = run_rlscope("validate", *options, "--out", self.dir, "--", *command, timeout=300)
        test.assertEqual(self.result.returncode, expect_exit, self.result.stderr)
        test.assertNotIn("terminate called", self.result.stderr)
        with open(os.path.join(self.dir, "validate.json")) as f:
            self.json = json.load(f)

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()


class Usage(unittest.TestCase):
    def check(self, args, needle):
        cwd = scratch_dir(self)
        result = subprocess.run([ARGS.rlscope, "validate", *args], capture_output=True, text=True, cwd=cwd,
                                timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(needle, result.stderr)
        self.assertIn("rlscope validate --help", result.stderr)
        self.assertEqual(os.listdir(cwd), [], "a usage error must not create anything")

    def test_usage_errors(self):
        self.check(["-n", "0", "--", "true"], "-n wants a whole number from 1 to 10000, not '0'")
        self.check(["-n", "two", "--", "true"], "-n wants a whole number from 1 to 10000, not 'two'")
        self.check(["-n"], "option -n needs a value")
        self.check(["--warmup", "-1", "--", "true"], "--warmup wants a whole number from 0 to 10000, not '-1'")
        self.check(["true"], "put '--' before the command to validate")
        self.check(["-n", "2", "sleep", "1"], "put '--' before the command to validate ('sleep' ...)")
        self.check(["--"], "no command to validate was given")
        self.check([], "no command to validate was given")
        self.check(["--bogus", "--", "true"], "unknown option '--bogus'")
        # The profiling options are run's, checked the same way.
        self.check(["--sim", "nocolon", "--", "true"], "--sim wants LIB:PATTERN")
        self.check(["--rules", "/no/such/rules", "--", "true"], "/no/such/rules")

    def test_help(self):
        result = run_rlscope("validate", "--help")
        self.assertEqual(result.returncode, 0)
        for needle in ("usage: rlscope validate", "rlscope.validate/1", "raw overhead", "bias of means", "quiet",
                       "--warmup K", "--no-cupti", "130"):
            self.assertIn(needle, result.stdout)
        listing = run_rlscope("--help")
        self.assertIn("validate", listing.stdout)

    def test_out_directory_that_is_not_empty_is_refused(self):
        out = scratch_dir(self)
        open(os.path.join(out, "something"), "w").close()
        result = run_rlscope("validate", "--out", out, "--", "true")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("is not an empty directory", result.stderr)


class Numbers(unittest.TestCase):
    def test_two_repetitions_are_recorded_consistently(self):
        v = Validation(self, ["sh", "-c", "echo out; echo err >&2"], options=["-n", "2", "--warmup", "1"])
        j = v.json
        self.assertEqual(j["schema"], "rlscope.validate/1")
        self.assertEqual(j["command"], ["sh", "-c", "echo out; echo err >&2"])
        self.assertEqual((j["n"], j["warmup"], j["completed"], j["status"], j["message"]), (2, 1, 2, "complete", ""))
        reps = j["repetitions"]
        self.assertEqual([r["rep"] for r in reps], [1, 2])
        self.assertEqual(reps[0]["order"], ["unprofiled", "profiled"])
        self.assertEqual(reps[1]["order"], ["profiled", "unprofiled"])
        for rep in reps:
            self.assertGreater(rep["unprofiled_wall_ns"], 0)
            self.assertGreater(rep["profiled_wall_ns"], 0)
            ratio = rep["profiled_wall_ns"] / rep["unprofiled_wall_ns"]
            self.assertAlmostEqual(rep["raw_overhead"], ratio, places=9)
            self.assertAlmostEqual(rep["uncorrected_bias"], ratio - 1, places=9)
            # Today's reports are not corrected: no corrected figures.
            self.assertIsNone(rep["corrected_wall_ns"])
            self.assertIsNone(rep["bias"])
            # The profiled run is a complete run directory, and its wall time
            # is the one validate used.
            run_dir = os.path.join(v.dir, rep["run_dir"])
            self.assertEqual(rep["run_dir"], "profiled-%02d" % rep["rep"])
            with open(os.path.join(run_dir, "report.json")) as f:
                self.assertEqual(json.load(f)["exit_code"], 0)
            with open(os.path.join(run_dir, "meta.json")) as f:
                self.assertEqual(json.load(f)["wall_ns"], rep["profiled_wall_ns"])
        ratios = [r["raw_overhead"] for r in reps]
        summary = j["summary"]
        self.assertAlmostEqual(summary["raw_overhead"]["mean"], statistics.mean(ratios), places=9)
        self.assertAlmostEqual(summary["raw_overhead"]["stddev"], statistics.stdev(ratios), places=9)
        self.assertAlmostEqual(summary["raw_overhead"]["min"], min(ratios), places=9)
        self.assertAlmostEqual(summary["raw_overhead"]["max"], max(ratios), places=9)
        self.assertAlmostEqual(summary["uncorrected_bias"]["mean"], statistics.mean(ratios) - 1, places=9)
        unprofiled = statistics.mean(r["unprofiled_wall_ns"] for r in reps) / 1e9
        profiled = statistics.mean(r["profiled_wall_ns"] for r in reps) / 1e9
        self.assertAlmostEqual(summary["unprofiled_wall_s"]["mean"], unprofiled, places=9)
        self.assertAlmostEqual(summary["uncorrected_bias_of_means"], (profiled - unprofiled) / unprofiled, places=9)
        self.assertFalse(j["corrected"])
        self.assertIsNone(summary["bias"])
        self.assertIsNone(summary["bias_of_means"])
        self.assertIsNone(summary["corrected_wall_s"])
        # Every run's output has its own files; validate's stdout stays clean.
        for kind in ("warmup-01", "unprofiled-01", "unprofiled-02", "profiled-01", "profiled-02"):
            self.assertEqual(v.read(kind + ".stdout"), "out\n")
            self.assertEqual(v.read(kind + ".stderr"), "err\n")
        self.assertEqual(v.result.stdout, "")
        self.assertIn("raw overhead", v.result.stderr)
        self.assertIn("n/a (uncorrected:", v.result.stderr)

    def test_a_known_duration_is_measured_both_ways(self):
        v = Validation(self, [PYTHON, "-c", "import time; time.sleep(0.3)"], options=["-n", "1", "--warmup", "0"])
        (rep,) = v.json["repetitions"]
        self.assertGreaterEqual(rep["unprofiled_wall_ns"], 300_000_000)
        self.assertGreaterEqual(rep["profiled_wall_ns"], 300_000_000)
        self.assertIsNone(v.json["summary"]["raw_overhead"]["stddev"], "one repetition has no spread")

    def test_profiling_options_reach_the_profiled_runs(self):
        rules = os.path.join(scratch_dir(self), "extra.rules")
        with open(rules, "w") as f:
            f.write("# no rules\n")
        v = Validation(self, ["true"], options=["-n", "1", "--warmup", "0", "--no-cupti", "--rules", rules])
        with open(os.path.join(v.dir, "profiled-01", "meta.json")) as f:
            self.assertEqual(json.load(f)["gpu_capture"], "off")
        self.assertEqual(len(os.listdir(os.path.join(v.dir, "profiled-01", "rules"))), 2)


class Failures(unittest.TestCase):
    def test_a_failing_command_stops_validate_and_names_the_run(self):
        v = Validation(self, ["sh", "-c", "echo broken >&2; exit 3"], expect_exit=1)
        stderr = v.result.stderr
        self.assertIn("warm-up run 1 failed", stderr)
        self.assertIn("exited with status 3", stderr)
        self.assertIn(os.path.join(v.dir, "warmup-01.stderr"), stderr)
        self.assertEqual(v.read("warmup-01.stderr"), "broken\n")
        self.assertEqual((v.json["status"], v.json["completed"]), ("failed", 0))
        self.assertIsNone(v.json["summary"])

        v = Validation(self, ["sh", "-c", "exit 3"], options=["--warmup", "0"], expect_exit=1)
        self.assertIn("the unprofiled run of repetition 1 failed", v.result.stderr)

    def test_a_command_failing_only_under_rlscope(self):
        v = Validation(self, ["sh", "-c", 'test -z "$RLSCOPE_SOCKET"'], options=["-n", "2", "--warmup", "0"],
                       expect_exit=1)
        self.assertIn("the profiled run of repetition 1 failed", v.result.stderr)
        self.assertIn("fails only under rlscope", v.result.stderr)
        self.assertEqual(v.json["status"], "failed")

    def test_a_command_that_cannot_run(self):
        out = os.path.join(scratch_dir(self), "v")
        result = run_rlscope("validate", "--out", out, "--", "/no/such/program")
        self.assertEqual(result.returncode, 127, result.stderr)
        self.assertIn("cannot run '/no/such/program'", result.stderr)


class Signals(unittest.TestCase):
    def test_sigint_stops_the_command_and_keeps_what_was_measured(self):
        out = os.path.join(scratch_dir(self), "v")
        proc = subprocess.Popen([ARGS.rlscope, "validate", "-n", "3", "--warmup", "0", "--out", out, "--",
                                 "sleep", "0.5"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The first repetition's line: the second has started (or is about to).
        for line in proc.stderr:
            if line.split()[:2] == ["1", "U"]:
                break
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertIn("interrupted by SIGINT", stderr)
        with open(os.path.join(out, "validate.json")) as f:
            j = json.load(f)
        self.assertEqual((j["status"], j["completed"], len(j["repetitions"])), ("interrupted", 1, 1))
        self.assertIsNotNone(j["summary"])


if __name__ == "__main__":
    main()
