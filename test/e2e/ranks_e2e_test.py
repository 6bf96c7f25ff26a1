#!/usr/bin/env python3
"""End-to-end tests of distributed jobs: a 2-rank data-parallel training
over torch.distributed's gloo backend (Debian's torch), started by a
torchrun stand-in that sets RANK/WORLD_SIZE, and by
torch.multiprocessing.spawn. Both are one job of two ranks in the report,
each rank's operations side by side, and rank 1, whose env steps take
three times as long, is the slowest in simulation.

  ranks_e2e_test.py --rlscope BIN --python PYTHON [unittest args]
"""
import os
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs")
WORKER = os.path.join(PROGRAMS, "ranks_worker.py")
LAUNCHER = os.path.join(PROGRAMS, "ranks_launcher.py")
STEPS = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


class Ranks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        probe = subprocess.run([ARGS.python, "-c", "import torch.distributed as d; print(d.is_gloo_available())"],
                               capture_output=True, text=True, timeout=120)
        if probe.stdout.strip() != "True":
            raise unittest.SkipTest(f"{ARGS.python} has no torch.distributed with gloo")

    def check_job(self, run, launcher):
        for rank in (0, 1):
            self.assertIn("rank %d: %d steps" % (rank, STEPS), run.result.stdout)
        jobs = run.report["jobs"]
        self.assertEqual(len(jobs), 1, jobs)
        job = jobs[0]
        self.assertEqual(job["launcher"], launcher)
        self.assertEqual(job["world_size"], 2)
        self.assertEqual([r["rank"] for r in job["ranks"]], [0, 1])
        pids = {p["pid"] for p in run.report["processes"]}
        self.assertTrue(all(r["pid"] in pids for r in job["ranks"]))
        operations = {o["operation"]: o for o in job["operations"]}
        for name in ("simulation", "backprop"):
            self.assertIn(name, operations)
            self.assertTrue(all(ns > 0 for ns in operations[name]["per_rank_ns"]), operations[name])
            self.assertEqual(operations[name]["total_ns"], sum(operations[name]["per_rank_ns"]))
        simulation = operations["simulation"]
        self.assertEqual(simulation["slowest_rank"], 1)
        self.assertGreater(simulation["per_rank_ns"][1], 1.5 * simulation["per_rank_ns"][0])
        with open(os.path.join(run.out, "report.txt")) as text:
            self.assertIn("job: 2 ranks", text.read())
        return job

    def test_ranks_a_launcher_names_in_the_environment(self):
        run = ProfiledRun(self, [ARGS.python, LAUNCHER, "2", free_port(), ARGS.python, WORKER, str(STEPS)],
                          options=("--quiet",))
        job = self.check_job(run, "torch.distributed")
        ranked = [p for p in run.report["processes"] if p["launcher_rank"] is not None]
        self.assertEqual(sorted(p["launcher_rank"]["rank"] for p in ranked), [0, 1])
        self.assertTrue(all(p["launcher_rank"]["world_size"] == 2 for p in ranked))
        self.assertIn("ranks_worker.py", job["command"])

    def test_ranks_multiprocessing_spawn_starts(self):
        env = dict(os.environ, MASTER_PORT=free_port())
        run = ProfiledRun(self, [ARGS.python, WORKER, str(STEPS), "--spawn", "2"], options=("--quiet",), env=env)
        job = self.check_job(run, "process tree")
        parent = [p for p in run.report["processes"] if p["pid"] == job["parent_pid"]]
        self.assertEqual(len(parent), 1)
        self.assertIn("--spawn", " ".join(parent[0]["argv"]))


if __name__ == "__main__":
    main(extra_arguments=("--python",))
