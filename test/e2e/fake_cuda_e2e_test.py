#!/usr/bin/env python3
"""End-to-end tests of `rlscope run` / `rlscope report` against the fake
CUDA runtime: the CUDA API time rlscope reports per operation must match the
time the fake itself measured inside its calls, the command's exit status
must be kept, and bad input must give clear errors.

Run by ctest:
  fake_cuda_e2e_test.py --rlscope BIN --client BIN --preload LIB [unittest args]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

ARGS = None


def run_rlscope(*args, env=None, timeout=120):
    return subprocess.run([ARGS.rlscope, *args], capture_output=True, text=True, env=env, timeout=timeout)


def load_ledgers(prefix):
    """The fake's own accounting: {pid: {operation: ns}} of CUDA API time."""
    ledgers = {}
    directory, base = os.path.split(prefix)
    for name in os.listdir(directory):
        if name.startswith(base + "."):
            with open(os.path.join(directory, name)) as f:
                ledger = json.load(f)
            per_operation = {}
            for call in ledger["calls"]:
                per_operation[call["operation"]] = per_operation.get(call["operation"], 0) + call["ns"]
            ledgers[ledger["pid"]] = per_operation
    return ledgers


def cuda_time_by_operation(report, pid):
    totals = {}
    for row in report["rows"]:
        if row["process"] == pid and row["category"] == "CUDA API":
            totals[row["operation"]] = totals.get(row["operation"], 0) + row["ns"]
    return totals


class ProfiledRun:
    """One `rlscope run` of the client in a fresh directory."""

    def __init__(self, test, *client_args, expect_exit=0):
        self.dir = tempfile.mkdtemp(prefix="rlscope-e2e-")
        test.addCleanup(shutil.rmtree, self.dir, True)
        self.out = os.path.join(self.dir, "run")
        self.ledger_prefix = os.path.join(self.dir, "ledger")
        env = dict(os.environ, RLSCOPE_FAKE_CUDART_LOG=self.ledger_prefix)
        self.result = run_rlscope("run", "--out", self.out, "--", ARGS.client, *client_args, env=env)
        test.assertEqual(self.result.returncode, expect_exit, self.result.stderr)
        with open(os.path.join(self.out, "report.json")) as f:
            self.report = json.load(f)
        self.ledgers = load_ledgers(self.ledger_prefix)


class CudaApiAccuracy(unittest.TestCase):
    def assert_matches_ledger(self, run, pid):
        reported = cuda_time_by_operation(run.report, pid)
        truth = run.ledgers[pid]
        self.assertEqual(set(reported), set(truth), f"operations differ: {reported} vs {truth}")
        for operation, ns in truth.items():
            self.assertAlmostEqual(reported[operation], ns, delta=0.05 * ns,
                                   msg=f"{operation}: rlscope {reported[operation]} ns, fake {ns} ns")

    def test_cuda_api_time_per_operation_matches_the_fake_within_5_percent(self):
        run = ProfiledRun(self, "--steps", "200", "--threads", "2", "--exit-code", "3", expect_exit=3)
        self.assertEqual(len(run.report["processes"]), 1)
        pid = run.report["processes"][0]["pid"]
        self.assert_matches_ledger(run, pid)
        operations = {row["operation"] for row in run.report["rows"]}
        self.assertLessEqual({"inference", "backprop", "optimizer", "simulation", "replay", "worker", "(none)"},
                             operations)

    def test_fork_child_is_reported_as_its_own_process(self):
        run = ProfiledRun(self, "--steps", "100", "--fork")
        processes = {p["pid"]: p for p in run.report["processes"]}
        self.assertEqual(len(processes), 2)
        parent = next(p for p in processes.values() if p["forked_from"] == 0)
        child = next(p for p in processes.values() if p["forked_from"] != 0)
        self.assertEqual(child["forked_from"], parent["pid"])
        self.assertTrue(child["ended_cleanly"])
        self.assert_matches_ledger(run, parent["pid"])
        self.assert_matches_ledger(run, child["pid"])
        self.assertIn("child_step", cuda_time_by_operation(run.report, child["pid"]))
        self.assertNotIn("child_step", cuda_time_by_operation(run.report, parent["pid"]))


class ReportContract(unittest.TestCase):
    def test_report_json_has_the_documented_shape(self):
        run = ProfiledRun(self, "--steps", "20")
        report = run.report
        self.assertEqual(report["schema"], "rlscope.report/1")
        self.assertEqual(report["command"][0], ARGS.client)
        self.assertEqual(report["exit_code"], 0)
        self.assertGreater(report["wall_ns"], 0)
        self.assertIs(report["corrected"], False)
        for row in report["rows"]:
            self.assertEqual(set(row), {"process", "operation", "resource", "category", "ns"})
            self.assertIn(row["resource"], {"CPU", "GPU", "CPU+GPU"})
            self.assertGreater(row["ns"], 0)

    def test_rows_partition_each_process_thread_time(self):
        run = ProfiledRun(self, "--steps", "50", "--threads", "3")
        (process,) = run.report["processes"]
        total = sum(row["ns"] for row in run.report["rows"] if row["process"] == process["pid"])
        self.assertEqual(total, process["traced_thread_ns"])
        self.assertEqual(total, sum(t["end_ns"] - t["begin_ns"] for t in process["threads"]))
        self.assertEqual(len(process["threads"]), 4)
        main = next(t for t in process["threads"] if t["tid"] == process["pid"])
        self.assertEqual(main["begin_ns"], process["begin_ns"])
        self.assertLessEqual(process["end_ns"] - process["begin_ns"], run.report["wall_ns"])

    def test_report_command_reproduces_the_report(self):
        run = ProfiledRun(self, "--steps", "20")
        again = run_rlscope("report", run.out)
        self.assertEqual(again.returncode, 0, again.stderr)
        with open(os.path.join(run.out, "report.txt")) as f:
            self.assertEqual(again.stdout, f.read())
        with open(os.path.join(run.out, "report.json")) as f:
            self.assertEqual(json.load(f)["rows"], run.report["rows"])

    def test_program_output_is_untouched(self):
        run = ProfiledRun(self, "--steps", "5")
        self.assertEqual(run.result.stdout, "nvtx_client: 5 steps done\n")


class ExitStatus(unittest.TestCase):
    def test_death_by_signal_exits_128_plus_signal_and_still_reports(self):
        # Long enough (~100 ms) for the preload to have flushed at least once.
        run = ProfiledRun(self, "--steps", "300", "--raise", str(int(signal.SIGABRT)),
                          expect_exit=128 + int(signal.SIGABRT))
        (process,) = run.report["processes"]
        self.assertFalse(process["ended_cleanly"])

    def test_sigterm_sent_to_rlscope_reaches_the_command(self):
        out = os.path.join(tempfile.mkdtemp(prefix="rlscope-e2e-"), "run")
        self.addCleanup(shutil.rmtree, os.path.dirname(out), True)
        proc = subprocess.Popen([ARGS.rlscope, "run", "--out", out, "--", "sleep", "30"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Timer(1.0, proc.send_signal, [signal.SIGTERM]).start()
        _, stderr = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 128 + int(signal.SIGTERM), stderr)
        self.assertTrue(os.path.exists(os.path.join(out, "report.json")))


class BadInput(unittest.TestCase):
    def check(self, args, code, needle):
        result = run_rlscope(*args)
        self.assertEqual(result.returncode, code, result.stderr)
        self.assertIn(needle, result.stderr)
        self.assertNotIn("terminate called", result.stderr)

    def test_usage_errors(self):
        self.check(["run", "--bogus", "--", "true"], 2, "unknown option '--bogus'")
        self.check(["run"], 2, "no command to profile")
        self.check(["run", "--out"], 2, "needs a value")
        self.check(["frobnicate"], 2, "unknown command 'frobnicate'")
        self.check([], 2, "usage:")
        self.check(["report"], 2, "no run directory given")

    def test_unwritable_out_directory(self):
        blocker = tempfile.NamedTemporaryFile(prefix="rlscope-e2e-")
        self.check(["run", "--out", os.path.join(blocker.name, "sub"), "--", "true"], 1,
                   "cannot create the output directory")

    def test_out_directory_holding_a_run_is_refused(self):
        run = ProfiledRun(self, "--steps", "1")
        self.check(["run", "--out", run.out, "--", "true"], 1, "already holds an rlscope run")

    def test_missing_command(self):
        out = tempfile.mkdtemp(prefix="rlscope-e2e-")
        self.addCleanup(shutil.rmtree, out, True)
        self.check(["run", "--out", os.path.join(out, "r"), "--", "/no/such/program"], 127,
                   "cannot run '/no/such/program'")

    def test_report_of_a_directory_that_is_not_a_run(self):
        empty = tempfile.mkdtemp(prefix="rlscope-e2e-")
        self.addCleanup(shutil.rmtree, empty, True)
        self.check(["report", empty], 1, "is not an rlscope run directory")
        self.check(["report", os.path.join(empty, "missing")], 1, "no such directory")

    def test_damaged_trace_is_analysed_up_to_the_damage(self):
        run = ProfiledRun(self, "--steps", "300")
        (trace,) = os.listdir(os.path.join(run.out, "trace"))
        path = os.path.join(run.out, "trace", trace)
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size - 100)
        result = run_rlscope("report", run.out)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn(f"{path}: truncated frame", result.stdout)
        self.assertIn("byte offset", result.stdout)
        with open(os.path.join(run.out, "report.json")) as f:
            damaged = json.load(f)
        self.assertTrue(damaged["rows"])


class CollectorAbsentOrGone(unittest.TestCase):
    """The profiled program must run on unchanged without a collector."""

    def run_client(self, socket_path, steps):
        env = dict(os.environ, LD_PRELOAD=ARGS.preload, RLSCOPE_SOCKET=socket_path,
                   NVTX_INJECTION64_PATH=ARGS.preload)
        return subprocess.run([ARGS.client, "--steps", str(steps)], capture_output=True, text=True, env=env,
                              timeout=120)

    def assert_one_warning(self, stderr, needle):
        lines = [line for line in stderr.splitlines() if line]
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn(needle, lines[0])

    def test_absent_collector(self):
        result = self.run_client("/nonexistent/rlscope.sock", 50)
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stdout, "nvtx_client: 50 steps done\n")
        self.assert_one_warning(result.stderr, "cannot reach the collector")

    def test_collector_that_goes_away_mid_run(self):
        directory = tempfile.mkdtemp(prefix="rlscope-e2e-")
        self.addCleanup(shutil.rmtree, directory, True)
        path = os.path.join(directory, "c.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)

        def accept_then_vanish():
            connection, _ = server.accept()
            connection.recv(4096)  # Take the first bytes, then disappear.
            connection.close()
            server.close()

        threading.Thread(target=accept_then_vanish, daemon=True).start()
        result = self.run_client(path, 2000)
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stdout, "nvtx_client: 2000 steps done\n")
        self.assert_one_warning(result.stderr, "lost the collector")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--rlscope", required=True)
    parser.add_argument("--client", required=True)
    parser.add_argument("--preload", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
