#!/usr/bin/env python3
"""The overhead correction changes amounts, never attribution, end to end.

The NVTX client's main thread runs its operations; inside each "backprop"
it hands work to a helper thread with no operation of its own (as torch's
autograd engine does) and waits: the helper makes runtime kernel launches,
a graph launch and a library's driver launch. The helper inherits the main
thread's operations by time (report/thread_analysis.h). A calibration with
large, known costs makes the correction remove far more from the main
thread than from the helper, so matching the helper's moved times against
the main thread's moved operations would misplace its work.

The same trace is reported twice: corrected (the run's calibration) and
measured (a copy of the run without it). Owners must be the same in both:
per-operation kernel counts and GPU time by launch, the GPU overlap rows,
the helper's operations; the amounts of CPU time must differ. In both, the
GPU totals must equal the sums of their rows (every kind of launch).

  attribution_e2e_test.py --rlscope BIN --client BIN --cupti LIB
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope  # noqa: E402

# Costs far above the fake's own timing noise (its calls last 12-50 us):
# most of the main thread's removal is its NVTX boundaries and calls, the
# helper's only its own calls.
COSTS = {"cuda_hook": 1000, "nvtx_range": 3000, "native_process": 0, "cupti:cudaLaunchKernel": 8000,
         "cupti:cuLaunchKernel": 4000, "cupti:cudaGraphLaunch": 8000, "cupti:cudaMemcpy": 8000,
         "cupti:cudaMemsetAsync": 8000, "cupti:cudaStreamSynchronize": 8000}
HELPER_LAUNCHES = 3


def calibration_file(directory):
    path = os.path.join(directory, "calibration.json")
    with open(path, "w") as f:
        json.dump({"schema": "rlscope.calibration/1", "rlscope_version": "test", "created_unix_s": 0,
                   "machine": {"cpu": "attribution test", "kernel": "", "gpu": "", "driver": "", "cuda_runtime": ""},
                   "costs": {site: {"ns": ns} for site, ns in COSTS.items()}}, f)
    return path


def by_operation(rows, key):
    return {row["operation"]: row[key] for row in rows}


def helper_thread(process):
    helpers = [t for t in process["threads"] if t["counted"] == "active"]
    assert len(helpers) == 1, process["threads"]
    return helpers[0]


class CorrectionKeepsAttribution(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rlscope-e2e-attribution-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        out = os.path.join(cls.dir, "run")
        result = run_rlscope("run", "--quiet", "--cupti", ARGS.cupti, "--calibration", calibration_file(cls.dir),
                             "--out", out, "--", ARGS.client, "--steps", "60", "--library-launches", "2",
                             "--helper-launches", str(HELPER_LAUNCHES), timeout=300)
        assert result.returncode == 0, result.stderr
        # The measured view of the same trace: the run without its calibration.
        measured = os.path.join(cls.dir, "measured")
        shutil.copytree(out, measured, ignore=shutil.ignore_patterns("calibration.json", "report.*"))
        result = run_rlscope("report", measured, timeout=300)
        assert result.returncode == 0, result.stderr
        cls.views = {}
        for name, directory in (("corrected", out), ("measured", measured)):
            with open(os.path.join(directory, "report.json")) as f:
                cls.views[name] = json.load(f)

    def process(self, view):
        (process,) = self.views[view]["processes"]
        return process

    def test_the_views_are_what_they_say(self):
        self.assertTrue(self.views["corrected"]["corrected"], self.views["corrected"]["correction"])
        self.assertFalse(self.views["measured"]["corrected"])
        # The correction did move time, differently per thread.
        corrected, measured = self.process("corrected"), self.process("measured")
        for view in (corrected, measured):
            self.assertEqual(view["gpu"]["status"], "captured", view["gpu"]["message"])
        main_thread = [t for t in corrected["threads"] if t["counted"] == "lifetime"][0]
        measured_main = [t for t in measured["threads"] if t["tid"] == main_thread["tid"]][0]
        self.assertLess(main_thread["end_ns"] - main_thread["begin_ns"],
                        measured_main["end_ns"] - measured_main["begin_ns"])

    def test_kernel_counts_and_gpu_time_by_launch_are_identical(self):
        corrected, measured = self.process("corrected")["gpu"], self.process("measured")["gpu"]
        self.assertEqual(by_operation(corrected["operations"], "kernels"),
                         by_operation(measured["operations"], "kernels"))
        self.assertEqual(by_operation(corrected["operations"], "kernel_ns"),
                         by_operation(measured["operations"], "kernel_ns"))
        self.assertEqual(corrected["by_launch"], measured["by_launch"])
        self.assertEqual(corrected["kernels_by_launch"], measured["kernels_by_launch"])
        # The helper's launches are backprop's: 7 of the main thread's per
        # step are inference's (3 + 2 library) and backprop's (2 + 2 in
        # optimizer); the helper's kernel, graph and library launches too.
        kernels = by_operation(corrected["operations"], "kernels")
        self.assertEqual(kernels["backprop"], 60 * (2 + HELPER_LAUNCHES + 1 + 1))
        self.assertEqual(kernels["inference"], 60 * (3 + 2))
        self.assertEqual(kernels.get("simulation", 0), 0)

    def test_gpu_overlap_attribution_is_identical(self):
        corrected, measured = self.process("corrected")["gpu"], self.process("measured")["gpu"]
        self.assertEqual(by_operation(corrected["operations"], "gpu_busy_ns"),
                         by_operation(measured["operations"], "gpu_busy_ns"))
        self.assertEqual(by_operation(corrected["operations"], "gpu_busy_fraction"),
                         by_operation(measured["operations"], "gpu_busy_fraction"))

        def gpu_rows(view):
            return sorted((r["operation"], r["category"], r["ns"]) for r in self.views[view]["rows"]
                          if r["resource"] == "GPU")

        self.assertEqual(gpu_rows("corrected"), gpu_rows("measured"))
        self.assertEqual(self.views["corrected"]["gpu_busy_ns"], self.views["measured"]["gpu_busy_ns"])

    def test_the_helper_keeps_its_operation_and_loses_its_own_overhead(self):
        # Its work: rows other than Wait. Where the machine is slow enough
        # that the helper sits blocked for a flusher sample or more between
        # two backprops (seen under ASan beside two CPU hogs), the thread's
        # own rows also hold that Wait, under whatever operation the main
        # thread was in meanwhile; Wait is in no operation's time.
        def work(thread):
            return [r for r in thread["rows"] if r["category"] != "Wait"]

        corrected, measured = helper_thread(self.process("corrected")), helper_thread(self.process("measured"))
        self.assertEqual({r["operation"] for r in work(corrected)}, {"backprop"})
        self.assertEqual({r["operation"] for r in work(measured)}, {"backprop"})
        # Amounts do change: the helper's own CUDA calls lose their inflation.
        self.assertLess(sum(r["ns"] for r in work(corrected)), sum(r["ns"] for r in work(measured)))

    def test_every_corrected_row_has_a_measured_owner(self):
        # Per thread, each corrected (operation, resource, category) was
        # measured too (the reverse need not hold: rlscope's own time, and
        # pieces the correction removed whole, are gone).
        measured = {t["tid"]: t for t in self.process("measured")["threads"]}
        for thread in self.process("corrected")["threads"]:
            keys = {(r["operation"], r["resource"], r["category"]) for r in thread["rows"]}
            measured_keys = {(r["operation"], r["resource"], r["category"]) for r in measured[thread["tid"]]["rows"]}
            self.assertLessEqual(keys, measured_keys, thread["tid"])

    def test_gpu_totals_equal_the_sums_of_their_rows(self):
        for view in ("corrected", "measured"):
            gpu = self.process(view)["gpu"]
            with self.subTest(view=view):
                operations = gpu["operations"]
                self.assertEqual(sum(r["gpu_busy_ns"] for r in operations), gpu["busy_ns"])
                self.assertEqual(sum(r["kernels"] for r in operations), gpu["kernels"])
                self.assertEqual(sum(r["kernel_ns"] for r in operations), gpu["kernel_ns"])
                rows = [r for r in self.views[view]["rows"] if r["resource"] == "GPU"]
                self.assertEqual(sum(r["ns"] for r in rows), gpu["busy_ns"])  # One device.
                self.assertEqual(sum(r["count"] for r in gpu["by_launch"]),
                                 gpu["kernels"] + gpu["memcpys"] + gpu["memsets"])
                self.assertEqual(gpu["unattributed"], 0)
                apis = {row["api"]: row for row in gpu["apis"]}
                self.assertEqual(apis["cudaGraphLaunch"]["kernels"], 60)
                self.assertEqual(apis["cuLaunchKernel"]["kernels"], 60 * 3)  # Library launches: 2 + 1 per step.


if __name__ == "__main__":
    main(extra_arguments=("--client", "--cupti"))
