"""The overhead correction end to end, against known truth.

The fake CUPTI makes each traced CUDA call's callbacks wait a known time
(RLSCOPE_FAKE_CUPTI_CALLBACK_NS): profiling then inflates every call by a
known amount, far above timing noise. `rlscope calibrate` must measure that
inflation; the corrected report of a profiled run must give back the
per-operation CUDA time the fake runtime's ledger records in an unprofiled
run (the truth), and `rlscope validate` must find the corrected wall time
close to the unprofiled one while the raw overhead is large.

What calibration measures of CUPTI is the fake's wait plus rlscope's own
callbacks (and its handling of the activity records), which no ledger
knows and which a busy machine slows (seen: 3.4 us a launch beside two CPU
hogs and a parallel test suite, 1.5-2 us on a quiet machine). So the known
inflation is checked as a difference: the CUPTI costs of a calibration with
the fake's wait, less those of one without it, made alongside.

The fake runs its calls at their nominal length throughout
(RLSCOPE_FAKE_CUDART_SCALE=1, also while calibrating): a call waits out its
nominal time from its start, so part of a nested call's callback time
hides in it, in the calibration loop exactly as in the client.

  correction_e2e_test.py --rlscope BIN --client BIN --cupti LIB
"""
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from e2e_support import ARGS, ledger_allowances, main, run_rlscope, scratch_dir, trace_stream_bytes

DELAY_NS = 5000
STEPS = "300"


def cuda_time_by_operation(rows, pid):
    totals = {}
    for row in rows:
        if row["process"] == pid and row["category"] == "CUDA API":
            totals[row["operation"]] = totals.get(row["operation"], 0) + row["ns"]
    return totals


def steal_ns_per_cpu():
    """The time the hypervisor ran other guests on this machine's CPUs
    (/proc/stat's steal), per CPU, since boot; 0 where it is not told."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK") // (os.cpu_count() or 1)
    except (OSError, IndexError, ValueError):
        return 0


def load_ledger(prefix):
    """The fake's own CPU time per operation (one process), and the
    allowance per operation (e2e_support.ledger_allowances)."""
    files = glob.glob(prefix + "*")
    assert len(files) == 1, files
    with open(files[0]) as f:
        ledger = json.load(f)
    per_operation = {}
    for call in ledger["calls"]:
        per_operation[call["operation"]] = per_operation.get(call["operation"], 0) + call["ns"]
    return ledger["pid"], per_operation, ledger_allowances(ledger)


class Correction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rlscope-e2e-correction-")
        cls.env = dict(os.environ, RLSCOPE_FAKE_CUPTI_CALLBACK_NS=str(DELAY_NS), RLSCOPE_FAKE_CUDART_SCALE="1")
        cls.calibration = os.path.join(cls.dir, "calibration.json")
        cls.calibrate()

    @classmethod
    def run_calibrate(cls, path, env, accept_uncertain):
        """One `rlscope calibrate --quick` into `path`: its costs, or None
        when it refused to store them (a busy machine)."""
        accept = ["--accept-uncertain"] if accept_uncertain else []
        result = run_rlscope("calibrate", "--quick", "--repetitions", "5", *accept, "--calibration", path,
                             "--python", sys.executable, env=env, timeout=900)
        if result.returncode == 1 and "REFUSED" in result.stderr:
            print(f"\ncalibration into {os.path.basename(path)} was refused:\n{result.stderr[-2000:]}",
                  file=sys.stderr)
            return None
        if result.returncode != 0:
            raise AssertionError("rlscope calibrate failed:\n" + result.stderr)
        with open(path) as f:
            return json.load(f)["costs"]

    @classmethod
    def calibrate(cls):
        """Calibrates into cls.calibration (cls.costs), and without the
        fake's wait (cls.costs_without_wait), again when refused or when
        the known inflation is missed. Only CUPTI's costs of the latter
        matter: it is stored even where the machine is too busy to trust
        the rest."""
        attempts = 6
        for attempt in range(attempts):
            costs = cls.run_calibrate(cls.calibration, cls.env, accept_uncertain=attempt == attempts - 1)
            if costs is None:
                continue
            cls.costs = costs
            cls.costs_without_wait = cls.run_calibrate(os.path.join(cls.dir, "calibration-without-wait.json"),
                                                       dict(cls.env, RLSCOPE_FAKE_CUPTI_CALLBACK_NS="0"),
                                                       accept_uncertain=True)
            if cls.costs_without_wait is None:
                continue
            misses = cls.inflation_misses(cls.costs, cls.costs_without_wait)
            if not misses:
                break
            print(f"\ncalibration attempt {attempt + 1} missed the known inflation: {misses}", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def run_client(self, *options, env=None):
        out = os.path.join(scratch_dir(self), "run")
        ledger = os.path.join(os.path.dirname(out), "ledger")
        env = dict(env or self.env, RLSCOPE_FAKE_CUDART_LOG=ledger)
        result = run_rlscope("run", "--quiet", "--cupti", ARGS.cupti, *options, "--out", out, "--", ARGS.client,
                             "--steps", STEPS, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        return out, report, result, load_ledger(ledger)

    @staticmethod
    def inflation_misses(costs, costs_without_wait):
        """The CUPTI costs whose excess over those measured without the
        fake's wait is outside [0.9, 1.3] x the wait: entry and exit
        callbacks wait DELAY_NS each (a launch's nested driver call's
        callbacks hide in the launch's nominal time). The excess also holds
        the part of rlscope's callbacks that a wait pushes out of a
        launch's nominal time (its nested exit: ~1 us under load)."""
        misses = []
        for api in ("cudaMemsetAsync", "cudaStreamSynchronize", "cudaLaunchKernel", "cuLaunchKernel"):
            expected = 2 * DELAY_NS
            measured = costs["cupti:" + api]["ns"]
            excess = measured - costs_without_wait["cupti:" + api]["ns"]
            if not (0.9 * expected < excess < 1.3 * expected and measured > 0.9 * expected):
                misses.append(f"{api}: {measured:.0f} ns, {excess:.0f} ns more than without the wait, "
                              f"expected {expected}")
        return misses

    def costs_in_brief(self):
        """The calibrated costs a miss depends on, for its message."""
        return {site: f"{cost['ns']:.0f} +- {cost['spread_ns']:.0f} ns" for site, cost in self.costs.items()
                if site.startswith("cupti:") or site in ("cuda_hook", "nvtx_range", "native_process")}

    def test_calibration_measures_the_known_cupti_inflation(self):
        self.assertEqual(self.inflation_misses(self.costs, self.costs_without_wait), [])
        # The hook's own cost (CUPTI off) is a small difference of two long
        # loops: measured on bare calls it is a few tens of ns with a spread
        # below its value; priced off the fake's 40 us calls it drowned in
        # their jitter (1.4 +- 4.1 us), and every corrected call lost that.
        hook = self.costs["cuda_hook"]
        self.assertTrue(0 < hook["ns"] < 2000 and hook["spread_ns"] <= hook["ns"], hook)
        for site in ("cuda_hook", "trampoline", "nvtx_range", "native_process"):
            self.assertIn(site, self.costs)

    def test_corrected_cuda_time_per_operation_matches_the_fakes_ledger(self):
        # A preemption between the fake's and rlscope's timestamps counts on
        # one side only: each operation's margin also allows the time both
        # runs' threads waited for a CPU while in it (0 on a quiet machine)
        # and the first call's injection (ledger_allowances), and a miss is
        # retried (up to 3 runs); a systematic error misses every time.
        # The truth is the same run's ledger: the fake's own time in each
        # call, which CUPTI's callbacks (outside its windows) do not
        # inflate. A separate unprofiled run differs by whatever the host
        # did to one run and not the other: steal time (the hypervisor
        # running other guests), invisible to the preemption allowance, was
        # 13 % in bursts on a 2-core Xeon VM, and failed this check there.
        # Steal inside the fake's windows stretches both sides; inside
        # CUPTI's callbacks (wall-clock spins) only rlscope's. So each
        # operation may also be off by its share of the time the CPUs were
        # stolen while the run lasted (an upper bound; 0 without a
        # hypervisor's other guests).
        # A calibration whose quick loops all ran in one slow or fast
        # stretch of the machine is off for every run it corrects (seen: 1
        # in 9 here, one operation 6-7 % off in all three runs): after three
        # misses the machine is calibrated again and three more runs are
        # corrected by the new calibration. An error in the correction
        # itself misses with both.
        misses = []
        for attempt in range(6):
            if attempt == 3:
                print(f"\ncorrected CUDA time missed the ledger in 3 runs with one calibration ({misses}; "
                      f"{self.costs_in_brief()}): calibrating again", file=sys.stderr)
                self.calibrate()
            stolen_before = steal_ns_per_cpu()
            out, report, _, (pid, truth, allowance) = self.run_client("--calibration", self.calibration)
            stolen = steal_ns_per_cpu() - stolen_before
            total = sum(truth.values())
            margin = {op: allowance.get(op, 0) + int(stolen * ns / total) for op, ns in truth.items()}
            self.assertTrue(report["corrected"], report["correction"])
            corrected = cuda_time_by_operation(report["rows"], pid)
            uncorrected = cuda_time_by_operation(report["uncorrected_rows"], pid)
            self.assertEqual(set(corrected), set(truth))
            # Without correction the inflation is plain to see...
            self.assertGreater(uncorrected["inference"], 1.3 * truth["inference"] - margin["inference"])
            # ...with it, the fake's own time comes back.
            off = [f"{op}: corrected {corrected[op]} vs fake {ns} (allowed {margin[op]} ns more; stolen {stolen} ns)"
                   for op, ns in truth.items() if abs(corrected[op] - ns) > 0.05 * ns + margin[op]]
            if not off:
                break
            misses.append(off)
        else:
            self.fail(f"corrected CUDA time missed the ledger in 6 runs, 3 with each of 2 calibrations: {misses}; "
                      f"last calibration: "
                      f"{self.costs_in_brief()}")
        sites = report["correction"]["sites"]
        self.assertGreater(sites["cupti:cudaLaunchKernel"]["events"], 0)
        # The fake's GPU never has work queued when a wait begins (its work
        # ends before the next call can queue more): no wait gets time back
        # but by a preemption's accident (seen once beside a CI run and two
        # CPU hogs: 2 us of 104 ms removed, the removal scaled by the
        # waits for a CPU).
        self.assertLess(report["correction"]["wait_restored_ns"], 0.001 * report["correction"]["removed_ns"],
                        report["correction"])
        self.assertGreater(report["wall_ns"], report["corrected_wall_ns"])
        # The text report says so, with both views per operation.
        with open(os.path.join(out, "report.txt")) as f:
            text = f.read()
        self.assertIn("corrected for profiling overhead", text)
        self.assertIn("estimated wall time without rlscope", text)
        self.assertRegex(text, r"\n  inference +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s +[0-9.]+%")

    def test_on_a_busy_machine_each_cost_is_scaled_by_the_waits_for_a_cpu(self):
        """The client on one CPU with two busy loops gets at most a third of
        it: each of rlscope's costs took it about three times its CPU time
        in wall time, and the correction removes that
        (report/cpu_contention.h)."""
        cpu = str(min(os.sched_getaffinity(0)))
        # The hogs end by themselves in 2 minutes should this test be
        # killed before it stops them, and hold none of its output pipes.
        hogs = [subprocess.Popen(["taskset", "-c", cpu, "timeout", "120", "sh", "-c", "while :; do :; done"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                for _ in range(2)]
        try:
            out = os.path.join(scratch_dir(self), "run")
            result = subprocess.run(["taskset", "-c", cpu, ARGS.rlscope, "run", "--quiet", "--cupti", ARGS.cupti,
                                     "--calibration", self.calibration, "--out", out, "--", ARGS.client,
                                     "--steps", STEPS], capture_output=True, text=True, env=self.env, timeout=300)
        finally:
            for hog in hogs:
                hog.terminate()  # timeout passes it on to its loop (a kill would leave the loop running).
                hog.wait()
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            correction = json.load(f)["correction"]
        priced = correction["estimated_ns"] - correction["cpu_wait_ns"]
        # A third of a CPU or less: about 2 ns of waiting per ns run, more
        # where other work shares the CPU; at least doubled.
        self.assertGreater(correction["cpu_wait_ns"], priced, correction)
        with open(os.path.join(out, "report.txt")) as f:
            self.assertIn("of the estimate are waits for a CPU", f.read())

    def test_validate_finds_small_bias_where_raw_overhead_is_large(self):
        # Wall times of separate runs: a neighbour's load during some of
        # them moves each repetition's figures by itself. The margins grow by
        # twice the standard error the experiment itself measured (the
        # spread of its repetitions: about 0 on a quiet machine, so the
        # bounds stay as strict there), and an attempt that still misses is
        # made again with twice the repetitions, up to three attempts; a
        # systematic error misses every time. In one of ten runs beside two
        # CPU hogs the first attempt was disturbed throughout (raw 2.3x,
        # each repetition's bias +46 to +134 %) and its retry missed by a
        # point (+15.4 % against a bound of +14.3 %).
        misses = []
        for attempt, repetitions in enumerate((3, 6, 12)):
            out = os.path.join(scratch_dir(self), f"validate{attempt}")
            result = run_rlscope("validate", "-n", str(repetitions), "--calibration", self.calibration, "--cupti",
                                 ARGS.cupti, "--out", out, "--", ARGS.client, "--steps", STEPS, env=self.env,
                                 timeout=600)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(out, "validate.json")) as f:
                summary = json.load(f)
            self.assertTrue(summary["corrected"], summary)
            figures = summary["summary"]

            def noise(name):
                return 2 * (figures[name]["stddev"] or 0) / math.sqrt(repetitions)

            raw = figures["raw_overhead"]["mean"]
            bias = figures["bias_of_means"]
            uncorrected = figures["uncorrected_bias_of_means"]
            if (raw > 1.2 - noise("raw_overhead") and abs(bias) < 0.06 + noise("bias")
                    and abs(bias) < abs(uncorrected) / 4 + noise("bias")):
                return
            misses.append(figures)
        self.fail(f"corrected bias too large in {len(misses)} validations: {misses}; "
                  f"calibration: {self.costs_in_brief()}")

    def test_uncertain_costs_are_marked_and_named_by_the_report(self):
        with open(self.calibration) as f:
            calibration = json.load(f)
        self.assertIn("uncertain_costs", calibration["quality"])
        for site, cost in calibration["costs"].items():
            self.assertIn("uncertain", cost, site)
        # A hook cost whose repetitions disagreed: the report says so.
        calibration["costs"]["cuda_hook"].update(ns=50.0, spread_ns=400.0)
        doctored = os.path.join(scratch_dir(self), "doctored.json")
        with open(doctored, "w") as f:
            json.dump(calibration, f)
        out, report, _, _ = self.run_client("--calibration", doctored)
        with open(os.path.join(out, "report.txt")) as f:
            text = f.read()
        self.assertRegex(text, r"uncertain costs \(the calibration's repetitions disagreed\): [^\n]*cuda_hook 50 \+- 400 ns")

    def test_without_a_calibration_the_report_says_uncorrected_and_how_to_fix_it(self):
        env = dict(self.env, XDG_CACHE_HOME=scratch_dir(self))
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--cupti", ARGS.cupti, "--out", out, "--", ARGS.client, "--steps", "20", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        # One line, before the command runs (the report says it again).
        lines = [line for line in result.stderr.splitlines()
                 if line.startswith("rlscope run:") and "rlscope calibrate" in line]
        self.assertEqual(len(lines), 1, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertFalse(report["corrected"])
        self.assertNotIn("corrected_wall_ns", report)
        self.assertIn("rlscope calibrate", report["correction"]["message"])
        # `calibrate --check` says the same without measuring anything.
        check = run_rlscope("calibrate", "--check", env=env)
        self.assertEqual(check.returncode, 1, check.stderr)
        self.assertIn("rlscope calibrate", check.stderr)
        check = run_rlscope("calibrate", "--check", "--calibration", self.calibration, env=env)
        self.assertEqual(check.returncode, 0, check.stderr)
        self.assertEqual(check.stdout.strip(), self.calibration)
        # A calibration given later corrects the same run.
        again = run_rlscope("report", "--calibration", self.calibration, out)
        self.assertEqual(again.returncode, 0, again.stderr)
        with open(os.path.join(out, "report.json")) as f:
            self.assertTrue(json.load(f)["corrected"])

    def run_python_loop(self, calibration):
        """A Python loop of function calls, builtins and native calls,
        profiled and corrected by `calibration`: its report.json."""
        directory = scratch_dir(self)
        program = os.path.join(directory, "loop.py")
        with open(program, "w") as f:
            f.write("import json\n"
                    "def step(i):\n"
                    "    return len(json.dumps([i, i + 1])) + abs(-i)\n"
                    "total = 0\n"
                    "for i in range(300000):\n"
                    "    total += step(i)\n"
                    "print(total)\n")
        out = os.path.join(directory, "run")
        result = run_rlscope("run", "--quiet", "--calibration", calibration, "--out", out, "--", sys.executable,
                             program, env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            return json.load(f)

    def test_the_python_hook_is_timed_in_band_on_every_kind_of_callback(self):
        report = self.run_python_loop(self.calibration)
        hook = report["correction"]["python_hook"]
        self.assertIsNotNone(hook, report["correction"])
        self.assertGreater(hook["per_callback_ns"], 0)
        # One callback in 256 timed, whatever its kind: on the profile
        # function (3.11) each counted call, builtin and recorded native
        # call is two callbacks (its start and its return).
        sites = report["correction"]["sites"]
        version = "%d.%d" % sys.version_info[:2]
        if sys.version_info < (3, 12):
            counted = sum(sites.get(f"{site}@{version}", {}).get("events", 0)
                          for site in ("python_call", "python_builtin", "python_transition"))
            self.assertGreater(counted, 100_000, sites)
            self.assertLess(abs(hook["callbacks"] / (2 * counted) - 1), 0.1, (hook, sites))
        self.assertLessEqual(hook["under_priced_ns"], hook["hook_ns"])

    def test_a_price_below_the_python_hooks_own_time_gives_way_to_it(self):
        with open(self.calibration) as f:
            calibration = json.load(f)
        for site, cost in calibration["costs"].items():
            if site.startswith("python_") and not site.startswith("python_process"):
                cost.update(ns=0.5, spread_ns=0.0)
        doctored = os.path.join(scratch_dir(self), "cheap_python.json")
        with open(doctored, "w") as f:
            json.dump(calibration, f)
        report = self.run_python_loop(doctored)
        hook = report["correction"]["python_hook"]
        self.assertIsNotNone(hook, report["correction"])
        # The hook's own time is 15-50 ns a callback, the price 0.5 ns (the
        # rest of the price is the self-timed first sights of code, which
        # a busy machine inflates: 7.8 ms with 0.7 M callbacks timed at
        # 11.6 ms was seen; the loop is long enough to dwarf them): the
        # correction removes the timed time instead, and says so.
        self.assertGreater(hook["under_priced_ns"], 0.5 * hook["hook_ns"], hook)
        self.assertLess(hook["priced_ns"], hook["hook_ns"], hook)
        self.assertAlmostEqual(hook["floor_removed_ns"], hook["under_priced_ns"], delta=0.01 * hook["hook_ns"])
        sites = report["correction"]["sites"]
        self.assertAlmostEqual(sites["python_hook_timed"]["ns"], hook["floor_removed_ns"], delta=1000)

    def test_a_calibration_of_another_machine_is_not_applied(self):
        cache = scratch_dir(self)
        env = dict(self.env, XDG_CACHE_HOME=cache)
        # Where rlscope looks for this machine's file: the first run says.
        probe = run_rlscope("run", "--out", os.path.join(scratch_dir(self), "probe"), "--", "true", env=env)
        wanted = probe.stderr.split("no calibration for this machine (")[1].split(")")[0]
        with open(self.calibration) as f:
            other = json.load(f)
        other["machine"]["cpu"] = "Some Other CPU"
        os.makedirs(os.path.dirname(wanted), exist_ok=True)
        with open(wanted, "w") as f:
            json.dump(other, f)
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--out", out, "--", "true", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("another machine", result.stderr)
        self.assertIn("Some Other CPU", result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            self.assertFalse(json.load(f)["corrected"])

    def test_a_report_that_would_not_fit_in_memory(self):
        """The memory budget (report/memory_budget.h), with the available
        memory set through RLSCOPE_REPORT_MEMORY: a corrected analysis
        that would not fit falls back to the uncorrected one and says so;
        one that would not fit at all is refused with a message, the
        trace kept, and `rlscope run` still exits with the command's
        status."""
        out, report, _, _ = self.run_client("--calibration", self.calibration)
        self.assertTrue(report["corrected"])
        # The memory estimate grows with the stream, not the compressed file.
        trace = sum(trace_stream_bytes(path) for path in glob.glob(os.path.join(out, "trace", "*.rlt")))
        base = 64 << 20
        between = (3 * trace + base + 7 * trace + base) // 2  # Uncorrected fits, corrected does not.
        result = run_rlscope("report", "--calibration", self.calibration, out,
                             env=dict(self.env, RLSCOPE_REPORT_MEMORY=str(between)))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            fallback = json.load(f)
        self.assertFalse(fallback["corrected"])
        self.assertIn("needs about", fallback["correction"]["message"])
        self.assertIn("RLSCOPE_REPORT_MEMORY=unlimited", fallback["correction"]["message"])
        self.assertEqual(fallback["rows"], report["uncorrected_rows"])  # The same measured view.
        # Not even the uncorrected analysis fits: refused, nothing rewritten.
        before = os.path.getmtime(os.path.join(out, "report.json"))
        result = run_rlscope("report", out, env=dict(self.env, RLSCOPE_REPORT_MEMORY="1K"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("needs about", result.stderr)
        self.assertIn("the trace is kept", result.stderr)
        self.assertEqual(os.path.getmtime(os.path.join(out, "report.json")), before)
        # `unlimited` skips the check.
        result = run_rlscope("report", "--calibration", self.calibration, out,
                             env=dict(self.env, RLSCOPE_REPORT_MEMORY="unlimited"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            self.assertTrue(json.load(f)["corrected"])
        # A setting that is not a size is an error that names it.
        result = run_rlscope("report", out, env=dict(self.env, RLSCOPE_REPORT_MEMORY="lots"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("RLSCOPE_REPORT_MEMORY='lots'", result.stderr)
        # Under `rlscope run`: the command's own status, the trace on disk.
        run_out = os.path.join(scratch_dir(self), "refused")
        result = run_rlscope("run", "--out", run_out, "--", "sh", "-c", "exit 3",
                             env=dict(self.env, RLSCOPE_REPORT_MEMORY="1K"))
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("needs about", result.stderr)
        self.assertTrue(glob.glob(os.path.join(run_out, "trace", "*.rlt")))
        self.assertFalse(os.path.exists(os.path.join(run_out, "report.json")))

    def test_a_damaged_calibration_is_a_usage_error_before_anything_runs(self):
        bad = os.path.join(scratch_dir(self), "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        result = run_rlscope("run", "--calibration", bad, "--out", os.path.join(scratch_dir(self), "r"), "--", "true")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--calibration", result.stderr)


if __name__ == "__main__":
    main(extra_arguments=("--client", "--cupti"))
