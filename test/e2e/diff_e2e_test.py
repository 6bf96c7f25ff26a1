#!/usr/bin/env python3
"""End-to-end tests of `rlscope diff`: runs of the NVTX client (on the fake
CUDA runtime) with different step counts compared side by side; the
arithmetic is checked against each run's own report.json.

  diff_e2e_test.py --rlscope BIN --client BIN [unittest args]
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope, scratch_dir  # noqa: E402

DASH = "\u2014"


def times_by_operation_and_category(report):
    """{(operation, category, resource side): ns} summed over processes,
    CPU and CPU+GPU merged, as rlscope diff does."""
    totals = {}
    for row in report["rows"]:
        key = (row["operation"], row["category"], "GPU" if row["resource"] == "GPU" else "CPU")
        totals[key] = totals.get(key, 0) + row["ns"]
    return totals


def cuda_entries(report, operation):
    """How many times the operation's threads went into the CUDA API."""
    return sum(t["count"] for p in report["processes"] for t in p["transitions"]
               if t["operation"] == operation and t["to"] == "CUDA API")


class Run:
    """One `rlscope run --out OUT -- COMMAND` (both directories named "run",
    so their labels need disambiguating) and its report.json."""

    def __init__(self, out, command, options=()):
        self.out = out
        result = run_rlscope("run", *options, "--out", out, "--", *command)
        if result.returncode != 0:
            raise AssertionError(f"rlscope run failed ({result.returncode}): {result.stderr}")
        with open(os.path.join(out, "report.json")) as f:
            self.report = json.load(f)


class Diff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The same client, 10 and 20 steps; the second also opens ranges in
        # a selected NVTX domain, so it has an operation the first lacks.
        cls.scratch = tempfile.mkdtemp(prefix="rlscope-e2e-diff-")
        cls.small = Run(os.path.join(cls.scratch, "a", "run"), [ARGS.client, "--steps", "10"])
        cls.large = Run(os.path.join(cls.scratch, "b", "run"), [ARGS.client, "--steps", "20", "--domain-steps", "5"],
                        options=("--nvtx-domain", "MyTraining"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, True)

    def diff_json(self, *dirs):
        result = run_rlscope("diff", "--format", "json", *dirs)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_json_arithmetic_matches_the_two_reports(self):
        diff = self.diff_json("--totals", self.small.out, self.large.out)
        self.assertEqual(diff["schema"], "rlscope.diff/1")
        self.assertEqual([run["label"] for run in diff["runs"]], ["run#1", "run#2"])  # Same basename.
        self.assertEqual(diff["runs"][1]["command"][1:3], ["--steps", "20"])
        self.assertFalse(diff["mixed_correction"])
        self.assertFalse(any(run["corrected"] for run in diff["runs"]))  # No calibration in the test's cache.
        base = times_by_operation_and_category(self.small.report)
        other = times_by_operation_and_category(self.large.report)
        operations = {op["operation"]: op for op in diff["operations"]}
        self.assertEqual(set(operations), {key[0] for key in base} | {key[0] for key in other})
        checked = 0
        for name, op in operations.items():
            for cell in op["categories"]:
                key = (name, cell["category"], cell["resource"])
                a, b = base.get(key), other.get(key)
                self.assertEqual(cell["values"], [a, b], key)
                change = cell["changes"][1]
                self.assertIsNone(cell["changes"][0])
                if a is not None and b is not None:
                    self.assertEqual(change["status"], "both")
                    self.assertEqual(change["delta"], b - a, key)
                    if a:
                        self.assertAlmostEqual(change["ratio"], b / a, places=9)
                    checked += 1
                else:
                    self.assertEqual(change["status"], "new" if a is None else "gone")
                    self.assertIsNone(change["ratio"])
                    self.assertIsNone(change["delta"])
        self.assertGreater(checked, 5)
        # The per-step operations doubled, and so did their CUDA API calls.
        # (Their CUDA API *time* need not: on a loaded machine, or under
        # ASan, one slow run can take longer for 10 steps than the other
        # for 20, so the test asserts counts and only that time was seen.)
        inference = operations["inference"]
        self.assertEqual(inference["instances"]["values"], [10, 20])
        self.assertEqual(inference["instances"]["changes"][1]["delta"], 10)
        cuda = next(c for c in inference["categories"] if c["category"] == "CUDA API")
        self.assertTrue(all(ns > 0 for ns in cuda["values"]), cuda["values"])
        self.assertEqual(cuda_entries(self.large.report, "inference"), 2 * cuda_entries(self.small.report, "inference"))
        # Shares are of the run's thread time.
        thread_ns = [run["thread_ns"] for run in diff["runs"]]
        self.assertEqual(thread_ns[0], sum(ns for key, ns in base.items() if key[2] == "CPU"))
        for i in range(2):
            self.assertAlmostEqual(inference["cpu_ns"]["shares"][i], inference["cpu_ns"]["values"][i] / thread_ns[i])
        # An operation only the second run has: absent (null), "new".
        domain = operations["domain_op"]
        self.assertIsNone(domain["cpu_ns"]["values"][0])
        self.assertIsNone(domain["cpu_ns"]["shares"][0])
        self.assertEqual(domain["cpu_ns"]["changes"][1]["status"], "new")
        # Totals: wall times from the reports (uncorrected: the profiled ones).
        walls = diff["totals"]["total_wall_ns"]
        self.assertEqual(walls["values"], [self.small.report["wall_ns"], self.large.report["wall_ns"]])
        self.assertEqual(walls["changes"][1]["delta"], self.large.report["wall_ns"] - self.small.report["wall_ns"])
        # No GPU capture on this path: GPU busy is absent, not 0.
        self.assertIsNone(diff["runs"][0]["gpu_busy_fraction"])

    def test_reversed_order_reports_gone(self):
        diff = self.diff_json(self.large.out, self.small.out)
        domain = next(op for op in diff["operations"] if op["operation"] == "domain_op")
        self.assertEqual(domain["cpu_ns"]["changes"][1]["status"], "gone")
        self.assertIsNone(domain["cpu_ns"]["values"][1])

    def test_three_runs_each_against_the_first(self):
        diff = self.diff_json(self.small.out, self.large.out, self.small.out)
        self.assertEqual(len(diff["runs"]), 3)
        for op in diff["operations"]:
            self.assertEqual(len(op["cpu_ns"]["values"]), 3)
            self.assertEqual(len(op["cpu_ns"]["changes"]), 3)
            last = op["cpu_ns"]["changes"][2]
            if op["cpu_ns"]["values"][0] is not None:  # The same run again: no change.
                self.assertEqual(last["delta"], 0)
                if op["cpu_ns"]["values"][0]:
                    self.assertEqual(last["ratio"], 1.0)
            else:
                self.assertEqual(last["status"], "absent")

    def test_text_output(self):
        result = run_rlscope("diff", "--totals", self.small.out, self.large.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        text = result.stdout
        for needle in ["rlscope diff: 2 runs, baseline run#1", "run#1 (baseline)", "run#2",
                       "NOT corrected", "totals:", "wall time", "per operation and category", "inference",
                       "CUDA API", "domain_op", "new", DASH, "transitions per operation instance",
                       "Native->CUDA API", "ratio", "delta"]:
            self.assertIn(needle, text)
        domain_line = next(line for line in text.splitlines() if line.strip().startswith("domain_op"))
        self.assertIn("new", domain_line)
        self.assertIn(DASH, domain_line)
        self.assertNotIn(" 0 ns", domain_line)
        # --top 1 keeps one operation and says how many were left out.
        top = run_rlscope("diff", "--top", "1", self.small.out, self.large.out)
        self.assertEqual(top.returncode, 0, top.stderr)
        self.assertIn("more operations", top.stdout)

    def test_per_step(self):
        # The client makes one simulation call per step: 10 and 20 steps.
        totals = self.diff_json("--totals", self.small.out, self.large.out)
        self.assertEqual(totals["totals"]["step_operation"], "simulation")
        self.assertEqual(totals["totals"]["steps"]["values"], [10, 20])
        self.assertFalse(totals["per_step"])
        self.assertEqual(totals["per_step_why"], "")
        # By default, runs of different lengths are compared per step.
        per_step = self.diff_json(self.small.out, self.large.out)
        self.assertTrue(per_step["per_step"])
        self.assertIn("different numbers of steps (10 vs 20", per_step["per_step_why"])
        self.assertEqual(per_step, self.diff_json("--per-step", self.small.out, self.large.out) | {
            "per_step_why": per_step["per_step_why"]})
        # A run against itself: the same steps, so totals.
        self.assertFalse(self.diff_json(self.small.out, self.small.out)["per_step"])
        self.assertEqual(run_rlscope("diff", "--per-step", "--totals", self.small.out, self.large.out).returncode, 2)
        for key in ("total_wall_ns", "thread_ns"):
            for i, steps in enumerate((10, 20)):
                self.assertAlmostEqual(per_step["totals"][key]["values"][i],
                                       totals["totals"][key]["values"][i] / steps, delta=1)
        by_name = {op["operation"]: op for op in per_step["operations"]}
        whole = {op["operation"]: op for op in totals["operations"]}
        self.assertAlmostEqual(by_name["simulation"]["cpu_ns"]["values"][1],
                               whole["simulation"]["cpu_ns"]["values"][1] / 20, delta=1)
        self.assertEqual(by_name["simulation"]["instances"]["values"], [10, 20])
        text = run_rlscope("diff", "--per-step", self.small.out, self.large.out)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("times are per step", text.stdout)
        # An operation no run entered: every time absent, and a warning per run.
        missing = self.diff_json("--per-step", "--step-operation", "no such op", self.small.out, self.large.out)
        self.assertEqual(missing["totals"]["steps"]["values"], [None, None])
        self.assertEqual(missing["totals"]["total_wall_ns"]["values"], [None, None])
        self.assertEqual(sum("never entered 'no such op'" in w for w in missing["warnings"]), 2)
        self.assertEqual(run_rlscope("diff", "--per-step=yes", self.small.out, self.large.out).returncode, 2)
        self.assertEqual(run_rlscope("diff", "--step-operation", "", self.small.out, self.large.out).returncode, 2)

    def test_errors(self):
        one = run_rlscope("diff", self.small.out)
        self.assertEqual(one.returncode, 2)
        self.assertIn("two or more", one.stderr)
        self.assertEqual(run_rlscope("diff").returncode, 2)
        unknown = run_rlscope("diff", "--format", "xml", self.small.out, self.large.out)
        self.assertEqual(unknown.returncode, 2)
        self.assertIn("text, json or html", unknown.stderr)
        self.assertEqual(run_rlscope("diff", "--bogus", self.small.out, self.large.out).returncode, 2)
        not_a_run = scratch_dir(self)
        bad = run_rlscope("diff", self.small.out, not_a_run)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("not an rlscope run directory", bad.stderr)
        self.assertEqual(bad.stdout, "")
        helped = run_rlscope("diff", "--help")
        self.assertEqual(helped.returncode, 0)
        self.assertIn("rlscope.diff/1", helped.stdout)


if __name__ == "__main__":
    main(extra_arguments=["--client"])
