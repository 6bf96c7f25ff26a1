"""`rlscope calibrate` refuses a calibration it cannot trust, end to end.

The test seams of calibrate (documented in collector/calibrate_command.cc
and calibration/contention.h) make refusal deterministic:
RLSCOPE_CALIBRATE_TEST_DISTURB=SITE=NS makes one site's repetitions
disagree however often it is measured again, and
RLSCOPE_CALIBRATE_TEST_CONTENTION overrides the contention figures. Each
calibration is --quick (about 10 s on 2 cores). Nothing here asserts a
timing.

  calibrate_verdict_e2e_test.py --rlscope BIN --python PYTHON
"""
import hashlib
import json
import os
import unittest

from e2e_support import ARGS, main, run_rlscope, scratch_dir

TIMEOUT_S = 600
DISTURB = "RLSCOPE_CALIBRATE_TEST_DISTURB"
CONTENTION = "RLSCOPE_CALIBRATE_TEST_CONTENTION"


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class CalibrateVerdict(unittest.TestCase):
    def calibrate(self, path, *options, **seams):
        env = dict(os.environ)
        env.pop(DISTURB, None)
        env.pop(CONTENTION, None)
        env.update(seams)
        return run_rlscope("calibrate", "--quick", "--python", ARGS.python, "--calibration", path, *options, env=env,
                           timeout=TIMEOUT_S)

    def previous_calibration(self):
        """A file standing for the calibration made before (its bytes are
        what must survive a refusal)."""
        path = os.path.join(scratch_dir(self), "calibration.json")
        with open(path, "w") as f:
            f.write('{"schema": "rlscope.calibration/1", "previous": true}\n')
        return path

    def test_disagreeing_repetitions_are_measured_again_then_refused(self):
        path = self.previous_calibration()
        before = digest(path)
        result = self.calibrate(path, **{DISTURB: "trampoline=1000"})
        self.assertEqual(result.returncode, 1, result.stderr)
        # Measured again before giving up, then refused naming the cost,
        # what was seen and what to do.
        self.assertIn("trampoline: ", result.stderr)
        self.assertIn("measuring again (round 2 of at most 3)", result.stderr)
        self.assertIn("measuring again (round 3 of at most 3)", result.stderr)
        self.assertIn("REFUSED", result.stderr)
        self.assertRegex(result.stderr, r"\n  - trampoline: [-0-9.]+ \+- [0-9.]+ ns after 6 repetitions in 3 rounds: "
                                        r"its repetitions disagree")
        self.assertIn("seen meanwhile: load average", result.stderr)
        # What to do depends on what was seen: a busy machine is to be
        # quieted; one that looked quiet (the seam's disagreement, on an
        # idle machine) points at a shared host.
        self.assertRegex(result.stderr, r"what to do: (stop or wait for other work .* run `rlscope calibrate` again"
                                        r"|this machine looked quiet .* host is shared)")
        self.assertIn("--accept-uncertain", result.stderr)
        self.assertIn(f"{path} is unchanged", result.stderr)
        self.assertEqual(digest(path), before)

    def test_heavy_steal_is_refused_even_when_costs_agree(self):
        path = self.previous_calibration()
        before = digest(path)
        result = self.calibrate(path, **{CONTENTION: "steal=0.3"})
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("steal time was 30.0 %", result.stderr)
        self.assertEqual(digest(path), before)

    def test_the_override_stores_it_with_its_verdict_and_reports_say_so(self):
        path = self.previous_calibration()
        result = self.calibrate(path, "--accept-uncertain", **{DISTURB: "trampoline=1000"})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("accepted-uncertain", result.stderr)
        with open(path) as f:
            calibration = json.load(f)
        quality = calibration["quality"]
        self.assertEqual(quality["verdict"], "accepted-uncertain")
        self.assertIn("trampoline", quality["remeasured"])
        self.assertTrue(any(reason.startswith("trampoline: ") for reason in quality["reasons"]), quality)
        self.assertIn("trampoline", quality["uncertain_costs"])
        self.assertEqual(calibration["costs"]["trampoline"]["repetitions"], 6)
        for figure in ("cpus", "load_average_begin", "steal_fraction", "other_busy_cpus", "lowest_kept_fraction"):
            self.assertIn(figure, quality["contention"])
        # A report it corrects states the verdict, in text and JSON.
        out = os.path.join(scratch_dir(self), "run")
        run = run_rlscope("run", "--calibration", path, "--out", out, "--", ARGS.python, "-c", "pass")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("was stored with --accept-uncertain", run.stderr)  # Said before the command runs.
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertTrue(report["corrected"], report["correction"])
        judged = report["correction"]["calibration_quality"]
        self.assertEqual(judged["verdict"], "accepted-uncertain")
        self.assertEqual(judged["reasons"], quality["reasons"])
        with open(os.path.join(out, "report.txt")) as f:
            text = f.read()
        self.assertRegex(text, r"calibration quality: ACCEPTED UNCERTAIN, stored with --accept-uncertain[^\n]*"
                               r"trampoline: ")

    def test_load_alone_warns_and_a_trusted_calibration_says_so(self):
        path = os.path.join(scratch_dir(self), "calibration.json")
        result = self.calibrate(path, **{CONTENTION: "load=40,other_busy=1.5"})
        if result.returncode == 1 and "REFUSED" in result.stderr:
            # Never for the injected load: a reason is a cost in doubt,
            # i.e. real contention (seen under `ctest -j2`: python_call
            # inflated, python_operation, which subtracts it, below zero).
            # Then this test proves nothing either way.
            reasons = [line for line in result.stderr.splitlines() if line.startswith("  - ")]
            self.assertTrue(reasons, result.stderr)
            for reason in reasons:
                self.assertNotIn("load average", reason)
                self.assertNotIn("CPUs busy", reason)
            self.skipTest("this machine is too busy to calibrate on:\n" + result.stderr[-2000:])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("warning: the load average reached 40.0", result.stderr)
        self.assertIn("warning: other work kept 1.5 CPUs busy", result.stderr)
        self.assertIn("(verdict: trusted)", result.stderr)
        with open(path) as f:
            quality = json.load(f)["quality"]
        self.assertEqual(quality["verdict"], "trusted")
        self.assertEqual(quality["reasons"], [])
        self.assertTrue(any("load average reached 40.0" in warning for warning in quality["warnings"]), quality)
        self.assertEqual(quality["contention"]["load_average_max"], 40)
        # An older file without a verdict still corrects, and says so.
        with open(path) as f:
            calibration = json.load(f)
        calibration["quality"] = {"uncertain_costs": []}
        older = os.path.join(scratch_dir(self), "older.json")
        with open(older, "w") as f:
            json.dump(calibration, f)
        out = os.path.join(scratch_dir(self), "run")
        run = run_rlscope("run", "--quiet", "--calibration", older, "--out", out, "--", ARGS.python, "-c", "pass")
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertTrue(report["corrected"], report["correction"])
        self.assertEqual(report["correction"]["calibration_quality"]["verdict"], "unrecorded")

    def test_a_malformed_test_seam_is_a_usage_error_before_measuring(self):
        path = self.previous_calibration()
        before = digest(path)
        result = self.calibrate(path, **{DISTURB: "trampoline"})
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(DISTURB, result.stderr)
        self.assertEqual(digest(path), before)

    def test_help_explains_refusal_and_the_override(self):
        result = run_rlscope("calibrate", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("--accept-uncertain", result.stdout)
        self.assertIn("refused", result.stdout)


if __name__ == "__main__":
    main(extra_arguments=("--python",))
