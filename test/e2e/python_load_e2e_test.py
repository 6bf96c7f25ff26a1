#!/usr/bin/env python3
"""End-to-end tests of `rlscope.load(DIR)`: a real run's report.json as
pandas DataFrames, or as lists of dicts when pandas cannot be imported,
each table holding report.json's rows; clear errors without a report; and
importing rlscope imports neither pandas nor anything else heavy.

  python_load_e2e_test.py --rlscope BIN --python PYTHON
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope, scratch_dir  # noqa: E402

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "rl_loop.py")

# Prints, as JSON, what load() gave: per table its type and rows.
PROBE = r"""
import json, sys
if sys.argv[2] == "hide":
    sys.modules["pandas"] = None  # import pandas now raises ImportError
import rlscope
tables = rlscope.load(sys.argv[1])
out = {}
for name, table in tables.items():
    if isinstance(table, list):
        out[name] = {"type": "list", "rows": table}
    else:
        out[name] = {"type": type(table).__module__.split(".")[0] + "." + type(table).__name__,
                     "rows": json.loads(table.to_json(orient="records"))}
print(json.dumps({"tables": out, "path": tables.path, "rows_attribute": len(tables.rows)}))
"""


def module_folder(test):
    found = run_rlscope("python-path")
    test.assertEqual(found.returncode, 0, found.stderr)
    return found.stdout.strip()


def probe(test, folder, run_dir, mode, expect_ok=True):
    env = dict(os.environ, PYTHONPATH=folder)
    env.pop("RLSCOPE_SOCKET", None)
    result = subprocess.run([ARGS.python, "-c", PROBE, run_dir, mode], capture_output=True, text=True, env=env,
                            timeout=120)
    if not expect_ok:
        return result
    test.assertEqual(result.returncode, 0, result.stderr)
    return json.loads(result.stdout)


class Load(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.holder = unittest.TestCase()
        cls.run_ = ProfiledRun(cls.holder, [ARGS.python, LOOP, "100"])
        cls.folder = module_folder(cls.holder)

    @classmethod
    def tearDownClass(cls):
        cls.holder.doCleanups()

    def check_tables(self, got):
        report = self.run_.report
        tables = got["tables"]
        self.assertEqual(got["path"], os.path.join(self.run_.out, "report.json"))
        self.assertEqual(tables["rows"]["rows"], report["rows"])
        self.assertEqual(got["rows_attribute"], len(report["rows"]))
        self.assertEqual([r["pid"] for r in tables["processes"]["rows"]], [p["pid"] for p in report["processes"]])
        for name, key in (("threads", "threads"), ("transitions", "transitions"), ("python_lines", "python_lines")):
            expected = [dict(pid=p["pid"], **{k: v for k, v in row.items() if k != "rows"})
                        for p in report["processes"] for row in p[key]]
            self.assertEqual(tables[name]["rows"], expected, name)
        thread_rows = [dict(pid=p["pid"], tid=t["tid"], **row) for p in report["processes"] for t in p["threads"]
                       for row in t["rows"]]
        self.assertEqual(tables["threads.rows"]["rows"], thread_rows)
        self.assertEqual([r["status"] for r in tables["gpu"]["rows"]],
                         [p["gpu"]["status"] for p in report["processes"]])
        self.assertEqual(tables["run"]["rows"][0]["wall_ns"], report["wall_ns"])
        # Tables that exist even when empty (no GPU work here).
        for name in ("gpu.operations", "gpu.kernels_by_launch", "gpu.lines", "instance_stats", "uncorrected_rows"):
            self.assertIn(name, tables)
        self.assertTrue(tables["python_lines"]["rows"])

    def test_tables_are_dataframes_with_pandas(self):
        got = probe(self, self.folder, self.run_.out, "pandas")
        self.assertEqual({t["type"] for t in got["tables"].values()}, {"pandas.DataFrame"})
        self.check_tables(got)

    def test_tables_are_lists_of_dicts_without_pandas(self):
        got = probe(self, self.folder, self.run_.out, "hide")
        self.assertEqual({t["type"] for t in got["tables"].values()}, {"list"})
        self.check_tables(got)

    def test_a_report_file_can_be_given_itself(self):
        got = probe(self, self.folder, os.path.join(self.run_.out, "report.json"), "hide")
        self.assertEqual(got["tables"]["rows"]["rows"], self.run_.report["rows"])

    def test_without_a_report_the_error_says_how_to_make_one(self):
        empty = scratch_dir(self)
        result = probe(self, self.folder, empty, "hide", expect_ok=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("FileNotFoundError", result.stderr)
        self.assertIn("no report.json in " + empty, result.stderr)
        self.assertIn("rlscope report " + empty, result.stderr)
        missing = os.path.join(empty, "nothing-here")
        result = probe(self, self.folder, missing, "hide", expect_ok=False)
        self.assertIn("FileNotFoundError", result.stderr)
        self.assertIn("rlscope run --out " + missing, result.stderr)

    def test_a_file_that_is_no_report_is_refused(self):
        bad = os.path.join(scratch_dir(self), "report.json")
        with open(bad, "w") as f:
            f.write("{\"rows\": []}")
        result = probe(self, self.folder, bad, "hide", expect_ok=False)
        self.assertIn("ValueError", result.stderr)
        self.assertIn(bad, result.stderr)

    def test_every_list_of_objects_is_a_table(self):
        # Fields a later report.json may have: each list of objects becomes
        # a table, nested ones with their process's pid.
        report = dict(self.run_.report)
        pid = report["processes"][0]["pid"]
        report["processes"] = [dict(report["processes"][0], instance_stats=[
            {"operation": "simulation", "instances": 3, "total_ns": 30}])]
        report["per_step"] = {"steps": 2, "operations": [{"operation": "simulation", "ns_per_step": 15}]}
        path = os.path.join(scratch_dir(self), "report.json")
        with open(path, "w") as f:
            json.dump(report, f)
        for mode in ("pandas", "hide"):
            tables = probe(self, self.folder, path, mode)["tables"]
            self.assertEqual(tables["instance_stats"]["rows"],
                             [{"pid": pid, "operation": "simulation", "instances": 3, "total_ns": 30}], mode)
            self.assertEqual(tables["per_step"]["rows"], [{"steps": 2}], mode)
            self.assertEqual(tables["per_step.operations"]["rows"], [{"operation": "simulation", "ns_per_step": 15}])

    def test_importing_rlscope_imports_no_pandas(self):
        env = dict(os.environ, PYTHONPATH=self.folder)
        env.pop("RLSCOPE_SOCKET", None)
        result = subprocess.run([ARGS.python, "-c", "import sys, rlscope\n"
                                 "print('pandas' in sys.modules, callable(rlscope.load))"],
                                capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(result.stdout, "False True\n", result.stderr)


if __name__ == "__main__":
    main(extra_arguments=("--python",))
