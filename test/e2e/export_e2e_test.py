#!/usr/bin/env python3
"""End-to-end tests of `rlscope export`: the NVTX client profiled with the
fake CUPTI (GPU activities and their launches), exported as Chrome trace
JSON, CSV and folded stacks, each checked against report.json; and the
command's errors.

  export_e2e_test.py --rlscope BIN --client BIN --cupti LIB --python PYTHON
"""
import csv
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope, scratch_dir  # noqa: E402


class Export(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.holder = unittest.TestCase()
        cls.run_ = ProfiledRun(cls.holder, [ARGS.client, "--steps", "40", "--threads", "2", "--library-launches", "2"],
                               options=("--cupti", ARGS.cupti))
        cls.files = os.path.join(cls.run_.dir, "export")
        os.mkdir(cls.files)
        cls.chrome = os.path.join(cls.files, "trace.json")
        cls.csv = os.path.join(cls.files, "rows.csv")
        cls.folded = os.path.join(cls.files, "stacks.folded")
        cls.result = run_rlscope("export", cls.run_.out, "--chrome", cls.chrome, "--csv", cls.csv, "--folded",
                                 cls.folded)

    @classmethod
    def tearDownClass(cls):
        cls.holder.doCleanups()

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.report = self.run_.report

    def test_chrome_trace_parses_and_has_its_tracks(self):
        with open(self.chrome) as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        meta = [e for e in events if e["ph"] == "M"]
        pids = {p["pid"] for p in self.report["processes"]}
        self.assertEqual({e["pid"] for e in meta if e["name"] == "process_name"}, pids)
        thread_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
        self.assertTrue(thread_names)
        complete = [e for e in events if e["ph"] == "X"]
        self.assertTrue(complete)
        for e in complete:
            self.assertGreaterEqual(e["dur"], 0, e)
            self.assertIn((e["pid"], e["tid"]), thread_names, e)
        self.assertIn("operation", {e["cat"] for e in complete})
        self.assertIn("CUDA API", {e["cat"] for e in complete})
        gpu_tracks = {key for key, name in thread_names.items() if name.startswith("GPU ")}
        self.assertTrue(gpu_tracks)
        kernels = [e for e in complete if (e["pid"], e["tid"]) in gpu_tracks]
        self.assertIn("Kernel", {e["cat"] for e in kernels})
        main_process = next(p for p in self.report["processes"] if p["forked_from"] == 0)
        gpu = main_process["gpu"]
        self.assertEqual(len([e for e in kernels if e["pid"] == main_process["pid"]]),
                         gpu["kernels"] + gpu["memcpys"] + gpu["memsets"])
        starts = {e["id"]: e for e in events if e["ph"] == "s"}
        finishes = {e["id"]: e for e in events if e["ph"] == "f"}
        self.assertTrue(starts)
        self.assertEqual(set(starts), set(finishes))
        for flow_id, start in starts.items():
            finish = finishes[flow_id]
            self.assertEqual(start["args"]["correlation_id"], finish["args"]["correlation_id"])
            self.assertIn((finish["pid"], finish["tid"]), gpu_tracks)
            self.assertNotIn((start["pid"], start["tid"]), gpu_tracks)
        # Every activity whose launch the report attributed has its arrow.
        self.assertEqual(gpu["unattributed"], 0)
        self.assertEqual(len([f for f in finishes.values() if f["pid"] == main_process["pid"]]),
                         gpu["kernels"] + gpu["memcpys"] + gpu["memsets"])

    def test_csv_rows_are_the_reports_rows(self):
        with open(self.csv, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertTrue(rows)
        view = "corrected" if self.report["corrected"] else "uncorrected"
        exported = sorted((int(r["process"]), r["operation"], r["resource"], r["category"], int(r["ns"]))
                          for r in rows if r["view"] == view)
        reported = sorted((r["process"], r["operation"], r["resource"], r["category"], r["ns"])
                          for r in self.report["rows"])
        self.assertEqual(exported, reported)
        self.assertEqual(sum(r[4] for r in exported), sum(r["ns"] for r in self.report["rows"]))

    def test_folded_stacks_sum_to_the_thread_time(self):
        totals = {}
        with open(self.folded) as f:
            for line in f:
                stack, count = line.rstrip("\n").rsplit(" ", 1)
                frames = stack.split(";")
                self.assertIn(len(frames), (3, 4), line)
                if len(frames) == 4:  # The Python line: "qualname (file:LINE)".
                    self.assertRegex(frames[3], r" \(.*:\d+\)$", line)
                pid = int(frames[0].rsplit("pid ", 1)[1].rstrip(")"))
                totals[pid] = totals.get(pid, 0) + int(count)
        self.assertEqual(totals, {p["pid"]: p["traced_thread_ns"] for p in self.report["processes"]
                                  if p["traced_thread_ns"] > 0})

    def test_stdout_and_errors(self):
        result = run_rlscope("export", self.run_.out, "--csv", "-")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("view,process,operation,resource,category,ns"))
        not_run = scratch_dir(self)
        result = run_rlscope("export", not_run, "--csv", os.path.join(not_run, "x.csv"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("not an rlscope run directory", result.stderr)
        unwritable = os.path.join(not_run, "missing", "x.json")
        result = run_rlscope("export", self.run_.out, "--chrome", unwritable)
        self.assertEqual(result.returncode, 1)
        self.assertIn(unwritable, result.stderr)
        result = run_rlscope("export", self.run_.out, "--perfetto", "-", "--chrome", "-")
        self.assertEqual(result.returncode, 2)
        self.assertIn("only one format", result.stderr)
        result = run_rlscope("export", self.run_.out)
        self.assertEqual(result.returncode, 2)
        result = run_rlscope("export", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("--folded", result.stdout)
        self.assertIn("--perfetto", result.stdout)


class FoldedPythonLines(unittest.TestCase):
    """A Python RL loop: folded stacks carry the calling Python line under
    the category, and still sum to each process's thread time."""

    def test_python_lines_are_frames_and_the_sums_hold(self):
        loop = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "rl_loop.py")
        run = ProfiledRun(self, [ARGS.python, loop, "200"])
        result = run_rlscope("export", run.out, "--folded", "-")
        self.assertEqual(result.returncode, 0, result.stderr)
        totals, located = {}, 0
        for line in result.stdout.splitlines():
            stack, count = line.rsplit(" ", 1)
            frames = stack.split(";")
            self.assertIn(len(frames), (3, 4), line)
            if len(frames) == 4:
                self.assertRegex(frames[3], r"^\S.* \(.+:\d+\)$", line)
                located += int(count)
            pid = int(frames[0].rsplit("pid ", 1)[1].rstrip(")"))
            totals[pid] = totals.get(pid, 0) + int(count)
        self.assertGreater(located, 0)
        self.assertEqual(totals, {p["pid"]: p["traced_thread_ns"] for p in run.report["processes"]
                                  if p["traced_thread_ns"] > 0})


if __name__ == "__main__":
    main(extra_arguments=("--client", "--cupti", "--python"))
