#!/usr/bin/env python3
"""End-to-end tests of capture windows (rlscope run --delay, --duration,
--capture-range api, --capture-signal): only the window is captured and
described, every operation instance of the run is still counted, a window
that never opens is said to be so, and the program's output is unchanged.

  capture_window_e2e_test.py --rlscope BIN --python PYTHON [unittest args]
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "capture_loop.py")
STEPS, FIRST, LAST = 300, 100, 160
RESETS = 3  # capture_loop.py resets before each of its three stretches: a reset is a simulation instance too.


def command(*mode):
    return [ARGS.python, PROGRAM, str(STEPS), str(FIRST), str(LAST), *mode]


def simulation_instances(report):
    """The per-instance statistics' count of simulation instances (0 without any)."""
    counts = [s["instances"] for p in report["processes"] for s in p["instance_stats"] if s["operation"] == "simulation"]
    return max(counts or [0])


class CaptureWindows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        bare = subprocess.run(command(), capture_output=True, text=True, timeout=120)
        assert bare.returncode == 0, bare.stderr
        cls.bare_stdout = bare.stdout

    def test_the_api_window_holds_only_its_steps_and_the_run_counts_all(self):
        run = ProfiledRun(self, command("--api"), options=("--capture-range", "api"))
        self.assertEqual(run.result.stdout.split("rlscope")[0].strip(), self.bare_stdout.strip())
        capture = run.report["capture"]
        self.assertTrue(capture["windowed"])
        self.assertEqual(len(capture["windows_ns"]), 1)
        self.assertEqual(capture["whole_run_steps"], STEPS + RESETS)
        # The window's steps, and its reset: what ran inside `with rlscope.capture():`.
        self.assertEqual(run.report["per_step"]["steps"], LAST - FIRST + 1)
        self.assertEqual(simulation_instances(run.report), LAST - FIRST + 1)
        begin, end = capture["windows_ns"][0]
        self.assertEqual(capture["captured_ns"], end - begin)
        self.assertLess(capture["captured_ns"], run.report["wall_ns"])
        # The breakdown counts the window only: no more thread time than it lasted.
        (process,) = run.report["processes"]
        self.assertLessEqual(process["traced_thread_ns"], capture["captured_ns"])
        self.assertGreater(process["traced_thread_ns"], 0)
        finding = run.report["headline"]["findings"][0]
        self.assertIn("of the run was captured, in 1 window (%d of the run's %d environment steps)"
                      % (LAST - FIRST + 1, STEPS + RESETS), finding)
        with open(os.path.join(run.out, "report.txt")) as text:
            report_text = text.read()
        self.assertIn("of the run was captured", report_text)
        # The whole run estimated: the window's time per instance times the
        # run's instances.
        self.assertIn("the whole run, estimated from the capture windows", report_text)
        estimates = {e["operation"]: e for e in capture["whole_run_estimate"]}
        simulation = estimates["simulation"]
        self.assertEqual(simulation["window_instances"], LAST - FIRST + 1)
        self.assertEqual(simulation["run_instances"], STEPS + RESETS)
        window_ns = sum(r["ns"] for r in run.report["rows"] if r["operation"] == "simulation"
                        and r["resource"] != "GPU" and r["category"] != "Wait")
        self.assertEqual(simulation["window_ns"], window_ns)
        self.assertAlmostEqual(simulation["estimated_ns"],
                               window_ns / (LAST - FIRST + 1) * (STEPS + RESETS), delta=1)
        # By level: the window's levels of the operation, each scaled alike.
        levels = {level["level"]: level for level in simulation["by_level"]}
        self.assertIn("Python", levels)
        self.assertEqual(sum(level["window_ns"] for level in levels.values()), window_ns)
        for name, level in levels.items():
            window_level_ns = sum(r["ns"] for r in run.report["rows"] if r["operation"] == "simulation"
                                  and r["resource"] != "GPU" and r["category"] == name)
            self.assertEqual(level["window_ns"], window_level_ns, name)
            self.assertAlmostEqual(level["estimated_ns"],
                                   window_level_ns / (LAST - FIRST + 1) * (STEPS + RESETS), delta=1)
        # The text's level line starts with the largest level of the whole
        # run's estimate (which one depends on the machine: a single stall
        # of a few ms in a window of 60 steps makes Native the largest).
        by_level = {}
        for estimate in run.report["capture"]["whole_run_estimate"]:
            for level in estimate["by_level"]:
                by_level[level["level"]] = by_level.get(level["level"], 0) + level["estimated_ns"]
        self.assertIn("  by level: %s " % max(by_level, key=by_level.get), report_text)
        self.assertIn("Estimated for the whole run, its loop takes about", finding)

    def test_without_a_capture_option_the_api_changes_nothing(self):
        run = ProfiledRun(self, command("--api"))
        self.assertFalse(run.report["capture"]["windowed"])
        self.assertEqual(run.report["per_step"]["steps"], STEPS + RESETS)

    def test_a_window_that_never_opens_says_so(self):
        run = ProfiledRun(self, command(), options=("--delay", "3600"))
        capture = run.report["capture"]
        self.assertTrue(capture["windowed"])
        self.assertEqual(capture["windows_ns"], [])
        self.assertEqual(capture["captured_ns"], 0)
        self.assertEqual(capture["whole_run_steps"], STEPS + RESETS)
        finding = run.report["headline"]["findings"][0]
        self.assertIn("Capture never opened", finding)
        # Not an error: the run ended before the delay, and the report says so.
        self.assertIn("before its --delay of 3600.000 s (--delay 3600)", finding)
        self.assertIn("shorter --delay", finding)
        self.assertIn("the run took %d environment steps" % (STEPS + RESETS), finding)
        self.assertEqual(run.report["processes"][0]["traced_thread_ns"], 0)
        with open(os.path.join(run.out, "meta.json")) as meta:
            recorded = json.load(meta)
        self.assertEqual(recorded["capture_request"], "--delay 3600")
        self.assertEqual(recorded["capture_delay_ns"], 3600 * 10**9)

    def test_a_timed_window_opens_and_closes_mid_run(self):
        # 3 s of paced steps; the window is [1.5 s, 2 s] after launch, inside
        # the loop even when start-up is slow (the loop's 3 s begin after it).
        run = ProfiledRun(self, [ARGS.python, PROGRAM, "0", "0", "0", "--paced", "3"],
                          options=("--delay", "1.5", "--duration", "0.5"))
        steps = int(run.result.stdout.split("rlscope")[0].split()[1])
        capture = run.report["capture"]
        self.assertTrue(capture["windowed"])
        self.assertEqual(len(capture["windows_ns"]), 1)
        # From the process's start, which comes after rlscope launched it
        # (the delay counts from the launch, as in Nsight): the window opens
        # the launch's lag (exec, loading the preload) before 1.5 s.
        begin, end = capture["windows_ns"][0]
        self.assertGreater(begin, 1_200_000_000)
        self.assertLess(begin, 2_000_000_000)
        self.assertLess(end, run.report["wall_ns"])
        self.assertEqual(capture["captured_ns"], end - begin)
        # At most the duration, give or take the flusher's toggling (a flush
        # interval; more on a busy machine).
        self.assertGreater(capture["captured_ns"], 0)
        self.assertLessEqual(capture["captured_ns"], 750_000_000)
        # Steps before, inside and after the window; the run counts them all
        # (and the stretch's one reset).
        self.assertEqual(capture["whole_run_steps"], steps + 1)
        self.assertGreater(run.report["per_step"]["steps"], 0)
        self.assertLess(run.report["per_step"]["steps"], steps - 1)
        self.assertIn("of the run was captured, in 1 window", run.report["headline"]["findings"][0])

    def test_a_duration_longer_than_the_run_captures_all_of_it(self):
        run = ProfiledRun(self, command(), options=("--duration", "3600"))
        # Capture never closed: the whole run, reported as one.
        self.assertFalse(run.report["capture"]["windowed"])
        self.assertEqual(run.report["per_step"]["steps"], STEPS + RESETS)
        self.assertNotIn("was captured", run.report["headline"]["findings"][0])

    def test_a_window_of_instances_holds_exactly_those(self):
        # Env steps as the preload counts them (resets are not steps): the
        # window opens at step 11's push and ends at step 61's, inside the
        # program's first stretch (no reset in it).
        run = ProfiledRun(self, command(), options=("--skip", "10", "--capture", "50"))
        self.assertEqual(run.result.stdout.split("rlscope")[0].strip(), self.bare_stdout.strip())
        self.assertEqual(run.report["per_step"]["steps"], 50)
        self.assertEqual(simulation_instances(run.report), 50)
        self.assertEqual(run.report["capture"]["whole_run_steps"], STEPS + RESETS)
        # --capture alone: from the start; another operation counted.
        first = ProfiledRun(self, command(), options=("--capture", "30", "--capture-op", "inference"))
        inference = [s["instances"] for p in first.report["processes"] for s in p["instance_stats"]
                     if s["operation"] == "inference"]
        self.assertEqual(inference, [30])

    def test_a_repeated_window_of_instances_spreads_over_the_run(self):
        # Windows of 20 steps every 100 from step 11: steps 11-30, 111-130
        # and 211-230, one in each of the program's three stretches (none
        # holds a reset).
        run = ProfiledRun(self, command(), options=("--skip", "10", "--capture", "20", "--every", "100"))
        self.assertEqual(run.result.stdout.split("rlscope")[0].strip(), self.bare_stdout.strip())
        capture = run.report["capture"]
        self.assertEqual(len(capture["windows_ns"]), 3, capture["windows_ns"])
        self.assertEqual(run.report["per_step"]["steps"], 60)
        self.assertEqual(simulation_instances(run.report), 60)
        self.assertEqual(capture["whole_run_steps"], STEPS + RESETS)
        self.assertIn("of the run was captured, in 3 windows", run.report["headline"]["findings"][0])
        with open(os.path.join(run.out, "meta.json")) as meta:
            self.assertEqual(json.load(meta)["capture_request"], "--skip 10 --capture 20 --every 100")
        estimate = {e["operation"]: e for e in capture["whole_run_estimate"]}
        self.assertEqual(estimate["simulation"]["window_instances"], 60)
        self.assertEqual(estimate["simulation"]["run_instances"], STEPS + RESETS)

    def test_the_capture_signal_opens_capture(self):
        # The signal's name may follow as an argument of its own.
        run = ProfiledRun(self, command("--signal"), options=("--capture-signal", "USR2"))
        self.assertEqual(run.result.stdout.split("rlscope")[0].strip(), self.bare_stdout.strip())
        capture = run.report["capture"]
        self.assertEqual(capture["whole_run_steps"], STEPS + RESETS)
        # Open from the signal (sent at step FIRST) to the end; how soon the
        # flusher toggles decides how many of those steps are inside.
        self.assertGreater(run.report["per_step"]["steps"], 0)
        self.assertLessEqual(run.report["per_step"]["steps"], STEPS - FIRST + 2)

    def test_bad_capture_options_are_usage_errors(self):
        for options, message in ((["--delay", "soon"], "--delay wants seconds"),
                                 (["--duration", "0"], "--duration wants a positive number of seconds"),
                                 (["--capture-range", "nvtx"], "--capture-range wants api, cudaProfilerApi or "
                                                               "nvtx:NAME"),
                                 (["--capture-range", "nvtx:"], "--capture-range wants api"),
                                 (["--capture-range", "api", "--capture-range", "x"], "--capture-range is given once"),
                                 (["--capture-range", "x", "--delay", "1"], "one kind of capture window per run"),
                                 (["--capture-range", "cudaProfilerAPI"], "is spelled api, cudaProfilerApi or nvtx:NAME"),
                                 (["--capture-range", "NVTX:step"], "is spelled api, cudaProfilerApi or nvtx:NAME"),
                                 (["--capture-range", "nvtx:step@MyDomain"], "without @DOMAIN"),
                                 (["--capture-signal=KILL"], "--capture-signal wants a signal"),
                                 (["--skip", "-1"], "--skip wants a whole number of instances"),
                                 (["--capture", "0"], "--capture wants a whole number of instances (at least 1)"),
                                 (["--capture-op", "inference"], "--capture-op names what --skip and --capture"),
                                 (["--every", "1", "--capture", "1"], "--every wants a whole number of instances "
                                                                      "(at least 2)"),
                                 (["--every", "10"], "--every P repeats a window of --capture M instances"),
                                 (["--every", "10", "--capture", "10"], "with M < P"),
                                 (["--every", "10", "--capture", "5", "--delay", "1"],
                                  "one kind of capture window per run"),
                                 (["--delay", "1", "--capture", "5"], "one kind of capture window per run"),
                                 (["--capture-signal=RTMIN+999"], "--capture-signal wants a signal"),
                                 (["--capture-signal=32"], "--capture-signal wants a signal")):
            result = run_rlscope("run", *options, "--", ARGS.python, "-c", "pass")
            self.assertEqual(result.returncode, 2, (options, result.stderr))
            self.assertIn(message, result.stderr)
        result = run_rlscope("validate", "--delay", "1", "--", ARGS.python, "-c", "pass")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("capture windows are for 'rlscope run'", result.stderr)


if __name__ == "__main__":
    main(extra_arguments=("--python",))
