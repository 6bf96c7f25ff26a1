#!/usr/bin/env python3
"""End-to-end tests of distributed jobs: a 4-rank data-parallel training
over torch.distributed's gloo backend (Debian's torch), started by a
torchrun stand-in that sets RANK/WORLD_SIZE, and by
torch.multiprocessing.spawn. Both are one job of four ranks in the report,
each rank's operations side by side, and rank 1, whose env steps take
about a hundred times as long, is the slowest in simulation and the
straggler the others wait for in their all_reduce calls (Communication,
in backprop). Who arrived last at each all_reduce is checked against the
workers' own clock reads. And the same job as two "nodes" (two launchers
of two ranks each, each under its own `rlscope run`) made one job by
`rlscope merge`, with one node's clocks moved by a known amount.

  ranks_e2e_test.py --rlscope BIN --python PYTHON [unittest args]
"""
import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope, scratch_dir  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs")
WORKER = os.path.join(PROGRAMS, "ranks_worker.py")
DDP_WORKER = os.path.join(PROGRAMS, "ranks_ddp_worker.py")
LAUNCHER = os.path.join(PROGRAMS, "ranks_launcher.py")
STEPS = 60
RANKS = 4


# Arrivals closer than this (ns) may be ordered one way by the worker's
# clock read and the other by rlscope's record of the call just after it.
CLOSE_ARRIVAL_NS = 1_000_000


def arrivals_by_rank(stdout):
    """{torch rank: [ns at which it reached each step's all_reduce]}, as
    the worker printed them."""
    found = re.findall(r"rank (\d+) arrivals: ([\d ]+)", stdout)
    return {int(rank): [int(t) for t in times.split()] for rank, times in found}


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

    def the_job(self, run, ranks):
        """{pid: torch rank}, from the workers' "rank R: ... pid P" lines,
        and the run's one job."""
        torch_rank = {}
        for rank in range(ranks):
            match = re.search(r"rank %d: %d steps, loss \S+, pid (\d+)" % (rank, STEPS), run.result.stdout)
            self.assertIsNotNone(match, run.result.stdout)
            torch_rank[int(match.group(1))] = rank
        jobs = run.report["jobs"]
        self.assertEqual(len(jobs), 1, jobs)
        return torch_rank, jobs[0]

    def check_job(self, run, launcher):
        # A job told by the process tree ranks its processes by start
        # order, not by torch rank.
        torch_rank, job = self.the_job(run, RANKS)
        self.assertEqual(job["launcher"], launcher)
        self.assertEqual(job["world_size"], RANKS)
        self.assertEqual([r["rank"] for r in job["ranks"]], list(range(RANKS)))
        pids = {p["pid"] for p in run.report["processes"]}
        self.assertTrue(all(r["pid"] in pids for r in job["ranks"]))
        operations = {o["operation"]: o for o in job["operations"]}
        for name in ("simulation", "backprop"):
            self.assertIn(name, operations)
            self.assertTrue(all(ns > 0 for ns in operations[name]["per_rank_ns"]), operations[name])
            self.assertEqual(operations[name]["total_ns"], sum(operations[name]["per_rank_ns"]))
        # The job's index of torch's rank 1 (slow env) and of torch's rank 0.
        slow = next(i for i, r in enumerate(job["ranks"]) if torch_rank[r["pid"]] == 1)
        fast = next(i for i, r in enumerate(job["ranks"]) if torch_rank[r["pid"]] == 0)
        simulation = operations["simulation"]
        self.assertEqual(simulation["slowest_rank"], job["ranks"][slow]["rank"])
        self.assertGreater(simulation["per_rank_ns"][slow], 1.5 * simulation["per_rank_ns"][fast])
        # Every rank's all_reduce calls are Communication, inside backprop.
        for rank in job["ranks"]:
            talk = [r for r in run.report["rows"] if r["process"] == rank["pid"] and r["category"] == "Communication"]
            self.assertTrue(talk, "rank %d has no Communication rows" % rank["rank"])
            self.assertGreater(sum(r["ns"] for r in talk if r["operation"] == "backprop"), 0, talk)
        # Lined up collective by collective: one per step (its all_reduce
        # calls come from one line, with no other line's native call between:
        # the in-place scaling is no C function call), and the set-up's and
        # teardown's; rank 1, slow in simulation, arrives last at most, and
        # in training every other rank waits longer for it than it waits for
        # them. (The set-up's rendezvous, in startup, waits for the rank
        # that started last, whichever it is: seen 0.9 s for rank 1.)
        communication = job["communication"]
        self.assertTrue(communication["lined_up"], communication)
        self.assertGreaterEqual(communication["collectives"], STEPS)
        self.assertLessEqual(communication["collectives"], STEPS + 4)
        # Who arrived last at each step's all_reduce, by the workers' own
        # clocks (the ground truth): rlscope's count per rank must match it,
        # but for the set-up's and teardown's collectives and the steps
        # where the last two arrived too close together to order.
        arrivals = arrivals_by_rank(run.result.stdout)
        self.assertEqual(sorted(arrivals), list(range(RANKS)), run.result.stdout)
        truth_last, close = [0] * RANKS, 0
        for step in range(STEPS):
            times = sorted(((arrivals[torch_rank[r["pid"]]][step], i) for i, r in enumerate(job["ranks"])),
                           reverse=True)
            truth_last[times[0][1]] += 1
            close += times[0][0] - times[1][0] < CLOSE_ARRIVAL_NS
        slack = communication["collectives"] - STEPS + close
        print(f"\nlast at a step's all_reduce, by the workers' clocks {truth_last} ({close} too close to order), "
              f"by rlscope {communication['per_rank_last']}", file=sys.stderr)
        for index in range(RANKS):
            self.assertLessEqual(abs(communication["per_rank_last"][index] - truth_last[index]), slack,
                                 (truth_last, close, communication))
        waits = communication["per_rank_wait_ns"]
        training = operations["backprop"]["per_rank_wait_ns"]
        self.assertEqual(len(training), RANKS, operations["backprop"])
        for index in range(RANKS):
            self.assertLessEqual(waits[index], communication["per_rank_ns"][index])
            self.assertLessEqual(training[index], waits[index])
        # Where rank 1 was clearly the straggler (so on a quiet machine; on
        # a busy one preemption decides who arrives last, seen: 27 of 61),
        # the others waited longer for it than it for them, and the
        # headline names it.
        if truth_last[slow] > STEPS * 3 // 4:
            for index in range(RANKS):
                if index != slow:
                    self.assertGreater(training[index], training[slow], (training, communication))
            self.assertIn("Rank %d of the %d-rank job is its straggler" % (job["ranks"][slow]["rank"], RANKS),
                          "\n".join(run.report["headline"]["findings"]))
        with open(os.path.join(run.out, "report.txt")) as text:
            report_text = text.read()
        self.assertIn("job: %d ranks" % RANKS, report_text)
        self.assertIn("waiting for others", report_text)
        return job

    def test_ranks_a_launcher_names_in_the_environment(self):
        run = ProfiledRun(self, [ARGS.python, LAUNCHER, str(RANKS), free_port(), ARGS.python, WORKER, str(STEPS)],
                          options=("--quiet",))
        job = self.check_job(run, "torch.distributed")
        ranked = [p for p in run.report["processes"] if p["launcher_rank"] is not None]
        self.assertEqual(sorted(p["launcher_rank"]["rank"] for p in ranked), list(range(RANKS)))
        self.assertTrue(all(p["launcher_rank"]["world_size"] == RANKS for p in ranked))
        self.assertIn("ranks_worker.py", job["command"])
        # The launcher runs no operation and starts the ranks: its work is
        # the operation "launcher", outside the loop the headline sums.
        launcher = [p for p in run.report["processes"] if p["launcher_rank"] is None]
        self.assertEqual(len(launcher), 1, [p["argv"] for p in launcher])
        operations = {row["operation"] for row in run.report["rows"] if row["process"] == launcher[0]["pid"]}
        self.assertEqual(operations, {"launcher"})
        self.assertIn("launcher processes aside", run.report["headline"]["findings"][0])

    def test_ranks_multiprocessing_spawn_starts(self):
        env = dict(os.environ, MASTER_PORT=free_port())
        run = ProfiledRun(self, [ARGS.python, WORKER, str(STEPS), "--spawn", str(RANKS)], options=("--quiet",), env=env)
        job = self.check_job(run, "process tree")
        parent = [p for p in run.report["processes"] if p["pid"] == job["parent_pid"]]
        self.assertEqual(len(parent), 1)
        self.assertIn("--spawn", " ".join(parent[0]["argv"]))

    def test_ranks_ddp_all_reduce_issued_from_cpp(self):
        # DistributedDataParallel all-reduces the gradients from C++ inside
        # loss.backward(), with no Python call: only the hooked gloo
        # collectives show it. Two ranks (the 2-core machine), rank 1 slow.
        ranks = 2
        run = ProfiledRun(self, [ARGS.python, LAUNCHER, str(ranks), free_port(), ARGS.python, DDP_WORKER, str(STEPS)],
                          options=("--quiet",))
        torch_rank, job = self.the_job(run, ranks)
        self.assertEqual(job["world_size"], ranks)
        # Each rank's all-reduce time is Communication in backprop (before
        # the hooks it was Backend, with no collective to line up).
        for rank in job["ranks"]:
            talk = [r for r in run.report["rows"] if r["process"] == rank["pid"] and r["category"] == "Communication"]
            self.assertGreater(sum(r["ns"] for r in talk if r["operation"] == "backprop"), 0, talk)
        # One all-reduce per step (the model's gradients fit one bucket),
        # plus the set-up's (the rendezvous, DDP's broadcast of the weights)
        # and teardown's.
        communication = job["communication"]
        self.assertTrue(communication["lined_up"], communication)
        self.assertGreaterEqual(communication["collectives"], STEPS)
        self.assertLessEqual(communication["collectives"], STEPS + 6)
        # Who reached each step's all-reduce last, by the ranks' own clocks
        # at the start of backward (the ground truth); where rank 1 clearly
        # was (a quiet machine), rlscope names it the straggler and the
        # other rank waited longer for it in backprop than it for them.
        starts = {int(r): [int(t) for t in times.split()]
                  for r, times in re.findall(r"rank (\d+) backward starts: ([\d ]+)", run.result.stdout)}
        self.assertEqual(sorted(starts), list(range(ranks)), run.result.stdout)
        slow = next(i for i, r in enumerate(job["ranks"]) if torch_rank[r["pid"]] == 1)
        fast = 1 - slow
        slow_last = sum(starts[1][step] > starts[0][step] for step in range(STEPS))
        print(f"\nDDP: rank 1 last at {slow_last} of {STEPS} steps by its clock, "
              f"by rlscope {communication['per_rank_last']}", file=sys.stderr)
        if slow_last > STEPS * 3 // 4:
            self.assertGreater(communication["per_rank_last"][slow], STEPS // 2, communication)
            training = {o["operation"]: o for o in job["operations"]}["backprop"]["per_rank_wait_ns"]
            self.assertGreater(training[fast], training[slow], (training, communication))
            self.assertIn("Rank %d of the %d-rank job is its straggler" % (job["ranks"][slow]["rank"], ranks),
                          "\n".join(run.report["headline"]["findings"]))


def shift_node_clocks(report_json, monotonic_ns, realtime_ns):
    """Rewrites a node's report.json as if its host's monotonic clock read
    `monotonic_ns` more (another boot time) and its real-time clock
    `realtime_ns` more (NTP's error): what a second host would have
    recorded of the same run."""
    with open(report_json) as f:
        report = json.load(f)
    for process in report["processes"]:
        process["begin_ns"] += monotonic_ns
        process["end_ns"] += monotonic_ns
        if process["begin_unix_ns"] is not None:
            process["begin_unix_ns"] += realtime_ns
        for call in process["collectives"]["calls"]:
            call[0] += monotonic_ns
            call[1] += monotonic_ns
    with open(report_json, "w") as f:
        json.dump(report, f)


class TwoNodes(unittest.TestCase):
    """Ranks 0-1 and 2-3 of one gloo job started by two launchers, each
    under its own `rlscope run` (one collector each, as on two nodes)."""

    @classmethod
    def setUpClass(cls):
        Ranks.setUpClass()

    def merge(self, *dirs):
        out = os.path.join(scratch_dir(self), "job")
        result = run_rlscope("merge", "--out", out, *dirs)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.last_job_json = os.path.join(out, "job.json")
        with open(self.last_job_json) as f:
            job = json.load(f)
        with open(os.path.join(out, "job.txt")) as f:
            self.assertEqual(f.read(), result.stdout)
        self.last_job_text = result.stdout
        return job

    def test_two_nodes_runs_merge_into_one_job_on_one_clock(self):
        scratch = scratch_dir(self)
        port = free_port()
        runs = []
        for node, first in (("node0", 0), ("node1", 2)):
            out = os.path.join(scratch, node)
            command = [ARGS.rlscope, "run", "--quiet", "--out", out, "--", ARGS.python, LAUNCHER, str(RANKS), port,
                       "--node", str(first), "2", ARGS.python, WORKER, str(STEPS)]
            runs.append((out, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        for out, process in runs:
            stdout, stderr = process.communicate(timeout=300)
            self.assertEqual(process.returncode, 0, stderr)
        node0, node1 = (out for out, _ in runs)
        # One host, one clock: the true offset is 0, which the collectives
        # must find (and the real-time pairs agree with, to microseconds).
        job = self.merge(node0, node1)
        self.assertEqual([n["label"] for n in job["nodes"]], ["node0", "node1"])
        clock = job["nodes"][1]["clock"]
        self.assertEqual(clock["aligned_by"], "collectives", clock)
        self.assertGreaterEqual(clock["collectives"], STEPS)
        # Within 100 us, or 3 standard errors where the machine scatters
        # the collectives' ends more (2 cores for 4 ranks: ~1 ms each).
        tolerance = max(100_000, 3 * clock["uncertainty_ns"])
        self.assertLess(abs(clock["offset_ns"]), tolerance, clock)
        # Each process's (real time, monotonic time) pair is one instant:
        # on one host the nodes' pairs agree to microseconds.
        self.assertLess(abs(clock["coarse_offset_ns"]), 100_000, clock)
        self.assertEqual(len(job["jobs"]), 1, job["jobs"])
        merged = job["jobs"][0]
        self.assertEqual(merged["world_size"], RANKS)
        self.assertEqual([(r["rank"], r["node"]) for r in merged["ranks"]],
                         [(0, "node0"), (1, "node0"), (2, "node1"), (3, "node1")])
        self.assertTrue(merged["communication"]["lined_up"], merged["communication"])
        operations = {o["operation"]: o for o in merged["operations"]}
        self.assertTrue(all(ns > 0 for ns in operations["backprop"]["per_rank_ns"]), operations["backprop"])
        # Node 1 as another host would have recorded it: its monotonic clock
        # 3.5 s behind (booted later), its real-time clock 2 ms fast. The
        # clock pairs alone are then 2 ms off; the collectives must find the
        # 3.5 s as they found 0 on the true clock.
        behind, ntp_error = 3_500_000_000, 2_000_000
        shifted = os.path.join(scratch, "node1_elsewhere")
        os.mkdir(shifted)
        shutil.copy(os.path.join(node1, "report.json"), shifted)
        shift_node_clocks(os.path.join(shifted, "report.json"), -behind, ntp_error)
        moved = self.merge(node0, shifted)
        moved_clock = moved["nodes"][1]["clock"]
        print(f"\nnode1's offset on one clock {clock['offset_ns']} ns; moved by {behind} ns: "
              f"{moved_clock['offset_ns']} ns by {moved_clock['collectives']} collectives "
              f"(spread {moved_clock['spread_ns']} ns, standard error {moved_clock['uncertainty_ns']} ns), "
              f"{moved_clock['coarse_offset_ns']} ns by real time",
              file=sys.stderr)
        self.assertEqual(moved_clock["aligned_by"], "collectives", moved_clock)
        # The pairs of one host agree to microseconds.
        self.assertLess(abs(moved_clock["coarse_offset_ns"] - (behind + ntp_error)), 100_000, moved_clock)
        # Every step is exact under a whole-node shift: the same estimate,
        # moved by the shift.
        self.assertEqual(moved_clock["offset_ns"], clock["offset_ns"] + behind)
        self.assertEqual(moved_clock["uncertainty_ns"], clock["uncertainty_ns"])
        self.assertEqual(moved["jobs"][0]["communication"]["collectives"], merged["communication"]["collectives"])
        self.check_job_directory(os.path.dirname(self.last_job_json), [node0, shifted], moved)
        # A node's directory without report.json is refused with the
        # command that makes one.
        empty = os.path.join(scratch, "node2")
        os.mkdir(empty)
        result = run_rlscope("merge", node0, empty)
        self.assertEqual(result.returncode, 1)
        self.assertIn("rlscope report %s" % empty, result.stderr)

    def check_job_directory(self, job_dir, node_dirs, job):
        """`rlscope report`, `diff` and `export` of a merged job's
        directory, with the nodes' own directories gone (JOB keeps copies
        of their reports)."""
        reports = []
        for node_dir in node_dirs:
            with open(os.path.join(node_dir, "report.json")) as f:
                reports.append(json.load(f))
        gone = [d + ".gone" for d in node_dirs]
        for d, g in zip(node_dirs, gone):
            os.rename(d, g)
        try:
            result = run_rlscope("report", job_dir)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stdout, self.last_job_text)
            self.check_job_diff(job_dir, reports)
            self.check_job_export(job_dir, reports, job)
        finally:
            for d, g in zip(node_dirs, gone):
                os.rename(g, d)
        # A one-node run compares with the job: its share of the job.
        result = run_rlscope("diff", "--format", "json", "--totals", job_dir, node_dirs[0])
        self.assertEqual(result.returncode, 0, result.stderr)
        diff = json.loads(result.stdout)
        self.assertEqual(diff["totals"]["thread_ns"]["values"][1], cpu_ns(reports[0]))
        # What needs traces is refused with what to do instead.
        for args in (("report", "--calibration", "x.json", job_dir), ("diff", "--calibration", "x.json", job_dir,
                                                                          job_dir),
                     ("export", job_dir, "--perfetto", os.path.join(job_dir, "t.pftrace"))):
            result = run_rlscope(*args)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn("merged job", result.stderr)

    def check_job_diff(self, job_dir, reports):
        result = run_rlscope("diff", "--format", "json", "--totals", job_dir, job_dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        diff = json.loads(result.stdout)
        totals = diff["totals"]
        # Every rank of every node summed; the nodes ran at once, so the
        # job's wall time is its longest node's.
        self.assertEqual(totals["thread_ns"]["values"], [sum(cpu_ns(r) for r in reports)] * 2)
        walls = [r["corrected_wall_ns"] if r["corrected"] else r["wall_ns"] for r in reports]
        self.assertEqual(totals["total_wall_ns"]["values"], [max(walls)] * 2)
        backprop = [o for o in diff["operations"] if o["operation"] == "backprop"]
        self.assertEqual(len(backprop), 1, [o["operation"] for o in diff["operations"]])
        self.assertEqual(backprop[0]["cpu_ns"]["values"], [sum(cpu_ns(r, "backprop") for r in reports)] * 2)
        self.assertEqual(backprop[0]["cpu_ns"]["changes"][1]["ratio"], 1.0)
        instances = sum(s["instances"] for r in reports for p in r["processes"] for s in p["instance_stats"]
                        if s["operation"] == "backprop")
        self.assertGreater(instances, 0)
        self.assertEqual(backprop[0]["instances"]["values"], [instances] * 2)

    def check_job_export(self, job_dir, reports, job):
        chrome, csv_path = (os.path.join(scratch_dir(self), name) for name in ("job.trace.json", "job.csv"))
        result = run_rlscope("export", job_dir, "--chrome", chrome, "--csv", csv_path)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        labels = [n["label"] for n in job["nodes"]]
        self.assertEqual(len(rows), sum(len(r["rows"]) for r in reports))
        self.assertEqual({row["node"] for row in rows}, set(labels))
        for label, report in zip(labels, reports):
            self.assertEqual(sum(int(row["ns"]) for row in rows if row["node"] == label), sum(
                row["ns"] for row in report["rows"]))
        with open(chrome) as f:
            events = json.load(f)["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
        calls = {}  # Chrome pid -> collective slices in order.
        for event in events:
            if event.get("cat") == "Communication":
                calls.setdefault(event["pid"], []).append(event)
        self.assertEqual(sum(len(c) for c in calls.values()),
                         sum(len(p["collectives"]["calls"]) for r in reports for p in r["processes"]))
        # The ranks' k-th collectives end together on the job's clock,
        # although node 1's own clock is 3.5 s behind.
        by_rank = {}
        for pid, slices in calls.items():
            rank = re.search(r"rank (\d+) of", names[pid])
            if rank:
                by_rank[(names[pid].split()[0], int(rank.group(1)))] = [e["ts"] + e["dur"] for e in slices]
        self.assertEqual(sorted(by_rank), [(labels[0], 0), (labels[0], 1), (labels[1], 2), (labels[1], 3)])
        first, other = by_rank[(labels[0], 0)], by_rank[(labels[1], 2)]
        n = min(len(first), len(other))
        gaps = sorted(abs(a - b) for a, b in zip(first[-n:], other[-n:]))
        self.assertLess(gaps[len(gaps) // 2], 10_000, gaps[:5])  # Microseconds.


def cpu_ns(report, operation=None):
    """The report's thread time (CPU-side rows), of one operation if given."""
    return sum(row["ns"] for row in report["rows"]
               if row["resource"] != "GPU" and (operation is None or row["operation"] == operation))


if __name__ == "__main__":
    main(extra_arguments=("--python",))
