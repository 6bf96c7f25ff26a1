#!/usr/bin/env python3
"""End-to-end tests of `rlscope export DIR --sqlite FILE`: the queries of
scripts/sqlite/headline_queries.sql, run on the exports of two real runs
(the NVTX client with the fake CUPTI for the GPU tables, a Python RL loop
for the Python tables), give the figures of each run's report.json; and
the file is replaced whole or not at all.

  sqlite_export_e2e_test.py --rlscope BIN --client BIN --cupti LIB --python PYTHON --queries FILE
"""
import json
import os
import re
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope, scratch_dir  # noqa: E402

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "rl_loop.py")
OUTSIDE_LOOP = ("startup", "teardown")


def headline_queries():
    """{name: SQL} of the queries file, each after its "-- name:" line."""
    with open(ARGS.queries) as f:
        text = f.read()
    parts = re.split(r"^-- name: (\w+)\n", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def query(database, sql):
    connection = sqlite3.connect(database)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute(sql)]
    finally:
        connection.close()


def percent(part, whole):
    """A share as the headline writes it (headline.cc Percent)."""
    share = 100.0 * part / whole if whole > 0 else 0
    return "%.1f%%" % share if share < 10 else "%.0f%%" % share


def loop_rows(report):
    return [r for r in report["rows"] if r["resource"] != "GPU" and r["category"] != "Wait"
            and r["operation"] not in OUTSIDE_LOOP]


def export(test, run):
    database = os.path.join(run.dir, "run.db")
    result = run_rlscope("export", run.out, "--sqlite", database)
    test.assertEqual(result.returncode, 0, result.stderr)
    test.assertFalse(os.path.exists(database + ".tmp"))
    return database


class HeadlineQueries:
    """The queries against report.json; subclasses set cls.run_."""

    @classmethod
    def setUpClass(cls):
        cls.holder = unittest.TestCase()
        cls.run_ = cls.profile(cls.holder)
        cls.database = export(cls.holder, cls.run_)
        cls.queries = headline_queries()

    @classmethod
    def tearDownClass(cls):
        cls.holder.doCleanups()

    def setUp(self):
        self.report = self.run_.report

    def run_query(self, name):
        self.assertIn(name, self.queries)
        return query(self.database, self.queries[name])

    def test_there_are_at_least_five_queries(self):
        self.assertGreaterEqual(len(self.queries), 5)

    def test_dominant_operation_and_its_share_are_the_headlines(self):
        [row] = self.run_query("dominant_operation")
        by_operation = {}
        for r in loop_rows(self.report):
            by_operation[r["operation"]] = by_operation.get(r["operation"], 0) + r["ns"]
        loop_ns = sum(by_operation.values())
        top = max(sorted(by_operation), key=lambda op: by_operation[op])
        self.assertEqual((row["operation"], row["ns"], row["loop_ns"]), (top, by_operation[top], loop_ns))
        finding = self.report["headline"]["findings"][0]
        self.assertIn(percent(row["ns"], row["loop_ns"]) + " of the training loop", finding)
        if top != "(none)":
            self.assertTrue(finding.startswith(top[0].upper() + top[1:] + " is "), finding)

    def test_level_shares_are_the_headlines(self):
        rows = self.run_query("level_shares")
        levels = {}
        for r in loop_rows(self.report):
            levels[r["category"]] = levels.get(r["category"], 0) + r["ns"]
        self.assertEqual({r["category"]: r["ns"] for r in rows}, levels)
        loop_ns = sum(levels.values())
        by_level = ", ".join("%s %s" % (r["category"], percent(r["ns"], loop_ns)) for r in rows[:3])
        self.assertIn("By level, the loop is " + by_level + ".", self.report["headline"]["findings"])

    def test_gpu_busy_time_is_the_reports(self):
        [row] = self.run_query("gpu_busy")
        self.assertEqual(row["gpu_busy_ns"], self.report["gpu_busy_ns"])
        self.assertEqual(row["wall_ns"], self.report["wall_ns"])

    def test_kernels_per_operation_are_the_reports_by_launch(self):
        expected = {}
        for process in self.report["processes"]:
            for r in process["gpu"]["by_launch"]:
                if r["category"] == "Kernel":
                    expected[(process["pid"], r["operation"])] = (r["count"], r["ns"])
        rows = self.run_query("kernels_per_operation")
        self.assertEqual({(r["pid"], r["operation"]): (r["kernels"], r["kernel_ns"]) for r in rows}, expected)

    def test_operation_instances_are_the_reports(self):
        rows = {(r["pid"], r["operation"]): r["instances"] for r in self.run_query("operation_instances")}
        checked = 0
        for process in self.report["processes"]:
            for r in process["transitions"]:
                self.assertEqual(rows.get((process["pid"], r["operation"]), 0), r["operation_instances"], r)
                checked += 1
            for r in process.get("instance_stats", []):
                self.assertEqual(rows.get((process["pid"], r["operation"]), 0), r["instances"], r)
        self.assertGreater(checked, 0)

    def test_instance_times_are_the_reports(self):
        rows = {(r["pid"], r["operation"]): r for r in self.run_query("instance_times")}
        expected = {(p["pid"], s["operation"]): s for p in self.report["processes"] for s in p["instance_stats"]}
        self.assertEqual(set(rows), set(expected))
        for key, stats in expected.items():
            for field in ("instances", "mean_ns", "p50_ns", "p95_ns", "max_ns"):
                self.assertEqual(rows[key][field], stats[field], (key, field))

    def test_time_per_step_is_the_reports(self):
        [row] = self.run_query("time_per_step")
        per_step = self.report["per_step"]
        self.assertEqual(row["steps"], per_step["steps"])
        if per_step["steps"]:
            self.assertEqual(row["loop_ns_per_step"], per_step["loop_ns_per_step"])
        else:
            self.assertIsNone(row["loop_ns_per_step"])


class NvtxClientWithGpu(HeadlineQueries, unittest.TestCase):
    """Two threads launching kernels (some through a library) under NVTX ranges."""

    @staticmethod
    def profile(test):
        return ProfiledRun(test, [ARGS.client, "--steps", "40", "--threads", "2", "--library-launches", "2"],
                           options=("--cupti", ARGS.cupti))

    def test_the_run_has_gpu_work(self):
        self.assertGreater(self.report["gpu_busy_ns"], 0)
        self.assertTrue(self.run_query("kernels_per_operation"))

    def test_every_activity_links_to_its_launching_call(self):
        [row] = query(self.database, "SELECT COUNT(*) AS n, COUNT(launch_id) AS linked, "
                      "SUM(c.correlation_id = g.correlation_id) AS same FROM gpu_activities g "
                      "LEFT JOIN cuda_api_calls c ON c.id = g.launch_id")
        unattributed = sum(p["gpu"]["unattributed"] for p in self.report["processes"])
        self.assertGreater(row["n"], 0)
        self.assertEqual(row["n"] - row["linked"], unattributed)
        self.assertEqual(row["same"], row["linked"])

    def test_meta_and_breakdown_rows_are_the_reports(self):
        meta = {r["key"]: r["value"] for r in query(self.database, "SELECT key, value FROM meta")}
        self.assertEqual(meta["schema"], "rlscope.sqlite/1")
        self.assertEqual(meta["wall_ns"], self.report["wall_ns"])
        self.assertEqual(meta["corrected"], int(self.report["corrected"]))
        self.assertEqual(meta["trace_times"], "measured")
        self.assertEqual(meta["command"], " ".join(self.report["command"]))
        rows = query(self.database, "SELECT view, pid, operation, resource, category, ns FROM report_rows")
        view = "corrected" if self.report["corrected"] else "uncorrected"
        self.assertEqual(sorted((r["pid"], r["operation"], r["resource"], r["category"], r["ns"])
                                for r in rows if r["view"] == view),
                         sorted((r["process"], r["operation"], r["resource"], r["category"], r["ns"])
                                for r in self.report["rows"]))


class NvtxClientCorrected(HeadlineQueries, unittest.TestCase):
    """The same client corrected with a hand-made calibration: the
    breakdown queries read the corrected view, and both views are there."""

    @staticmethod
    def profile(test):
        directory = scratch_dir(test)
        calibration = os.path.join(directory, "calibration.json")
        with open(calibration, "w") as f:
            json.dump({"schema": "rlscope.calibration/1", "rlscope_version": "test", "created_unix_s": 0,
                       "machine": {"cpu": "sqlite test", "kernel": "", "gpu": "", "driver": "", "cuda_runtime": ""},
                       "costs": {"cuda_hook": {"ns": 1000}, "nvtx_range": {"ns": 3000},
                                 "cupti:cudaLaunchKernel": {"ns": 8000}}}, f)
        return ProfiledRun(test, [ARGS.client, "--steps", "40", "--library-launches", "2"],
                           options=("--cupti", ARGS.cupti, "--calibration", calibration))

    def test_the_report_is_corrected_and_both_views_are_exported(self):
        self.assertTrue(self.report["corrected"])
        meta = {r["key"]: r["value"] for r in query(self.database, "SELECT key, value FROM meta")}
        self.assertEqual(meta["corrected"], 1)
        self.assertEqual(meta["corrected_wall_ns"], self.report["corrected_wall_ns"])
        views = {r["view"]: r["ns"] for r in query(self.database,
                                                    "SELECT view, SUM(ns) AS ns FROM report_rows GROUP BY view")}
        self.assertEqual(views, {"corrected": sum(r["ns"] for r in self.report["rows"]),
                                 "uncorrected": sum(r["ns"] for r in self.report["uncorrected_rows"])})
        self.assertLess(views["corrected"], views["uncorrected"])


class PythonLoop(HeadlineQueries, unittest.TestCase):
    """A numpy RL loop under the Python hook: calls into native code."""

    @staticmethod
    def profile(test):
        return ProfiledRun(test, [ARGS.python, LOOP, "200"])

    def test_top_user_line_is_the_headlines(self):
        pid, line = self.top_user_line()
        for name in ("top_user_line", "top_user_line_as_reported"):
            [row] = self.run_query(name)
            self.assertEqual((row["pid"], row["operation"], row["code"], row["line"], row["native_ns"]),
                             (pid, line["operation"], line["code"], line["line"], line["outer_ns"]), name)
            self.assertIn("rl_loop.py", row["code"])
        finding = next(f for f in self.report["headline"]["findings"] if f.startswith("Your most expensive line"))
        self.assertIn(":%d " % line["line"], finding)

    def top_user_line(self):
        top = None
        for process in self.report["processes"]:
            for line in process["python_lines"]:
                if line["user_code"] and line["operation"] not in OUTSIDE_LOOP and line["outer_ns"] > 0:
                    if top is None or line["outer_ns"] > top[1]["outer_ns"]:
                        top = (process["pid"], line)
        self.assertIsNotNone(top)
        return top

    def test_python_calls_are_in_the_database(self):
        [row] = query(self.database, "SELECT COUNT(*) AS n, COUNT(user_location_id) AS user FROM python_calls")
        self.assertGreater(row["n"], 0)
        self.assertGreater(row["user"], 0)


class FileHandling(unittest.TestCase):
    """An existing FILE is replaced only by a whole export."""

    @classmethod
    def setUpClass(cls):
        cls.holder = unittest.TestCase()
        cls.run_ = ProfiledRun(cls.holder, [ARGS.client, "--steps", "5"])

    @classmethod
    def tearDownClass(cls):
        cls.holder.doCleanups()

    def test_an_existing_file_is_replaced(self):
        database = os.path.join(self.run_.dir, "replaced.db")
        with open(database, "w") as f:
            f.write("not a database")
        with open(database + ".tmp", "w") as f:
            f.write("a stale export")
        result = run_rlscope("export", self.run_.out, "--sqlite", database)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(query(database, "SELECT * FROM processes"))
        self.assertFalse(os.path.exists(database + ".tmp"))

    def test_a_failed_export_leaves_the_file_as_it_was(self):
        database = os.path.join(self.run_.dir, "kept.db")
        with open(database, "w") as f:
            f.write("before")
        result = run_rlscope("export", os.path.join(self.run_.dir, "no-such-run"), "--sqlite", database)
        self.assertEqual(result.returncode, 1)
        with open(database) as f:
            self.assertEqual(f.read(), "before")
        self.assertFalse(os.path.exists(database + ".tmp"))

    def test_an_unwritable_place_is_named(self):
        database = os.path.join(self.run_.dir, "no-such-dir", "x.db")
        result = run_rlscope("export", self.run_.out, "--sqlite", database)
        self.assertEqual(result.returncode, 1)
        self.assertIn(database, result.stderr)

    def test_stdout_is_refused(self):
        result = run_rlscope("export", self.run_.out, "--sqlite", "-")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--sqlite", result.stderr)

    def test_help_documents_it(self):
        result = run_rlscope("export", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("--sqlite FILE", result.stdout)
        self.assertIn("gpu_activities", result.stdout)


if __name__ == "__main__":
    main(extra_arguments=("--client", "--cupti", "--python", "--queries"))
