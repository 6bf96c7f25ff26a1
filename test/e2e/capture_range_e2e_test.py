#!/usr/bin/env python3
"""End-to-end tests of capture windows placed by the program's own marks
(rlscope run --capture-range nvtx:NAME and --capture-range cudaProfilerApi):
the NVTX client marks two windows of a known number of steps with each kind
of mark (nvtx_client --window), and the report holds exactly those steps,
while counting every step of the run.

  capture_range_e2e_test.py --rlscope BIN --client BIN --cupti LIB [unittest args]
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main  # noqa: E402

STEPS, FIRST, COUNT = 60, 10, 8  # Windows: steps [10, 18) and [26, 34).


class CaptureRanges(unittest.TestCase):
    def windowed_run(self, mark, options, cupti=False):
        options = tuple(options) + (("--cupti", ARGS.cupti) if cupti else ("--no-cupti",))
        run = ProfiledRun(self, [ARGS.client, "--steps", str(STEPS), "--window", mark, str(FIRST), str(COUNT)],
                          options=options)
        self.assertIn("nvtx_client: %d steps done" % STEPS, run.result.stdout)
        return run

    def assert_two_windows_of_their_steps(self, run):
        capture = run.report["capture"]
        self.assertTrue(capture["windowed"])
        self.assertEqual(len(capture["windows_ns"]), 2, capture)
        self.assertEqual(capture["whole_run_steps"], STEPS)
        self.assertEqual(run.report["per_step"]["steps"], 2 * COUNT)
        (process,) = run.report["processes"]
        instances = {s["operation"]: s["instances"] for s in process["instance_stats"]}
        # Each step's operations begin inside the windows, those of no other step.
        for operation in ("inference", "backprop", "simulation", "replay"):
            self.assertEqual(instances[operation], 2 * COUNT, operation)
        (first, second) = capture["windows_ns"]
        self.assertLess(first[1], second[0])
        self.assertIn("in 2 windows (%d of the run's %d environment steps)" % (2 * COUNT, STEPS),
                      run.report["headline"]["findings"][0])

    def test_nvtx_push_ranges_nested_close_at_the_outermost_pop(self):
        run = self.windowed_run("nvtx", ("--capture-range", "nvtx:captured"))
        self.assert_two_windows_of_their_steps(run)

    def test_a_bare_name_is_an_nvtx_range_and_start_end_ranges_count(self):
        run = self.windowed_run("nvtx-startend", ("--capture-range", "captured"))
        self.assert_two_windows_of_their_steps(run)

    def test_cuda_profiler_start_and_stop_through_the_runtime(self):
        self.assert_two_windows_of_their_steps(self.windowed_run("profiler", ("--capture-range", "cudaProfilerApi")))

    def test_cuda_profiler_start_and_stop_through_the_runtime_with_cupti(self):
        # CUPTI's callbacks of the runtime's pair make no edge of their own
        # inside the hook's call.
        run = self.windowed_run("profiler", ("--capture-range", "cudaProfilerApi"), cupti=True)
        self.assert_two_windows_of_their_steps(run)

    def test_the_driver_profiler_api_through_cupti(self):
        # cuProfilerStart/Stop called with no runtime call around them: only
        # CUPTI's driver callbacks see them.
        run = self.windowed_run("driver-profiler", ("--capture-range", "cudaProfilerApi"), cupti=True)
        self.assert_two_windows_of_their_steps(run)

    def test_a_range_that_never_opens_says_so(self):
        run = self.windowed_run("nvtx", ("--capture-range", "nvtx:some_other_range"))
        capture = run.report["capture"]
        self.assertEqual(capture["windows_ns"], [])
        self.assertEqual(capture["whole_run_steps"], STEPS)
        finding = run.report["headline"]["findings"][0]
        self.assertIn("Capture never opened", finding)
        # What was asked, as typed.
        self.assertIn("--capture-range nvtx:some_other_range asked for a window the run never reached", finding)


if __name__ == "__main__":
    main(extra_arguments=("--client", "--cupti"))
