#!/usr/bin/env python3
"""End-to-end tests on the bundled RL workloads (Debian's torch, CPU, small
step budgets so the suite stays well inside CI's time): the operations RL
practitioners expect appear with no annotation, the backend is seen where
the network runs, the program's results are unchanged by profiling, and
threads and child processes are covered.

  workloads_e2e_test.py --rlscope BIN --python PYTHON --workloads DIR --mjtimer LIB [unittest args]
"""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main  # noqa: E402


def time_of(report, pid, operation, category=None):
    return sum(row["ns"] for row in report["rows"] if row["process"] == pid and row["operation"] == operation
               and (category is None or row["category"] == category))


def final_return(stdout):
    match = re.search(r"final_return=([-0-9.]+)", stdout)
    return match.group(1) if match else None


class Trainers(unittest.TestCase):
    def check_trainer(self, script, steps):
        command = [ARGS.python, os.path.join(ARGS.workloads, script), "--steps", str(steps), "--seed", "3", "--quiet"]
        plain = subprocess.run(command, capture_output=True, text=True, timeout=300)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        run = ProfiledRun(self, command)
        # Same seed, same result: profiling does not change the program.
        self.assertIsNotNone(final_return(plain.stdout))
        self.assertEqual(final_return(run.result.stdout), final_return(plain.stdout))
        (process,) = run.report["processes"]
        pid = process["pid"]
        for operation in ("simulation", "inference", "backprop"):
            self.assertGreater(time_of(run.report, pid, operation), 0, operation)
        self.assertGreater(time_of(run.report, pid, "inference", "Backend"), 0)
        self.assertGreater(time_of(run.report, pid, "backprop", "Backend"), 0)
        self.assertGreater(time_of(run.report, pid, "simulation", "Python"), 0)
        # ctypes calls into MuJoCo are caught by the simulator trampolines.
        self.assertGreater(time_of(run.report, pid, "simulation", "Simulator"), 0)
        return run

    def test_dqn(self):
        run = self.check_trainer("dqn.py", 1500)
        pid = run.report["processes"][0]["pid"]
        self.assertGreater(time_of(run.report, pid, "replay"), 0)

    def test_ppo(self):
        self.check_trainer("ppo.py", 1500)


class NativeWorkload(unittest.TestCase):
    def test_native_reinforce_gets_operations_from_native_stacks(self):
        if not ARGS.native_workload:
            self.skipTest("reinforce_cartpole was not built (needs libtorch-dev and libmujoco-dev)")
        command = [ARGS.native_workload, "--steps", "10000", "--seed", "1", "--quiet"]
        plain = subprocess.run(command, capture_output=True, text=True, timeout=300)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        run = ProfiledRun(self, command, env=dict(os.environ, RLSCOPE_STACK_INTERVAL_US="200"))
        self.assertEqual(final_return(run.result.stdout), final_return(plain.stdout))
        pid = run.report["processes"][0]["pid"]
        for operation in ("simulation", "inference", "backprop"):
            self.assertGreater(time_of(run.report, pid, operation), 0, operation)
        # libtorch calls from the program are Backend (--backend defaults);
        # mj_step is Simulator.
        self.assertGreater(time_of(run.report, pid, "backprop", "Backend"), time_of(run.report, pid, "backprop") / 2)
        self.assertGreater(time_of(run.report, pid, "inference", "Backend"), 0)
        self.assertGreater(sum(row["ns"] for row in run.report["rows"] if row["category"] == "Simulator"), 0)


class SimulatorAccuracy(unittest.TestCase):
    def test_simulator_time_matches_mujocos_own_step_timer_within_10_percent(self):
        program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs",
                               "mujoco_step_timing.py")
        run = ProfiledRun(self, [ARGS.python, program, ARGS.workloads, ARGS.mjtimer, "20000"])
        match = re.search(r"mj_step_ns=(\d+) calls=(\d+) preempted_ns=(-?\d+)", run.result.stdout)
        self.assertIsNotNone(match, run.result.stdout)
        truth_ns, calls, preempted_ns = int(match.group(1)), int(match.group(2)), max(0, int(match.group(3)))
        self.assertEqual(calls, 20000)
        pid = run.report["processes"][0]["pid"]
        measured_ns = time_of(run.report, pid, "simulation", "Simulator")
        # Both clocks are wall clocks, rlscope's around MuJoCo's: a
        # preemption between the two counts on rlscope's side only, so the
        # margin also allows the stepping thread's run delay (0 when quiet).
        self.assertAlmostEqual(measured_ns, truth_ns, delta=0.10 * truth_ns + preempted_ns,
                               msg=f"rlscope Simulator {measured_ns} ns vs MuJoCo's timer {truth_ns} ns"
                                   f" (preempted {preempted_ns} ns)")


class ThreadsAndChildren(unittest.TestCase):
    def test_threaded_rollout_with_a_child_process(self):
        run = ProfiledRun(self, [ARGS.python, os.path.join(ARGS.workloads, "threaded_rollout.py")])
        self.assertIn("threaded_rollout: ok", run.result.stdout)
        processes = run.report["processes"]
        self.assertEqual(len(processes), 2, [p["argv"] for p in processes])
        parent = next(p for p in processes if "--child" not in p["argv"])
        child = next(p for p in processes if "--child" in p["argv"])
        self.assertEqual(child["ppid"], parent["pid"])
        python_threads = [t for t in parent["threads"] if any(r["category"] == "Python" for r in t["rows"])]
        self.assertGreaterEqual(len(python_threads), 3)  # Main and two rollout threads.
        self.assertGreater(time_of(run.report, child["pid"], "simulation"), 0)


if __name__ == "__main__":
    main(extra_arguments=("--python", "--workloads", "--mjtimer"), optional_arguments=("--native-workload",))
