#!/usr/bin/env python3
"""Scale benchmark of `rlscope merge`: NODES synthetic nodes' report.json
files (RANKS ranks each of one torchrun job, COLLECTIVES collectives per
rank, 10 ms apart), each node's clock with a known offset (another boot
time: up to a day), a known real-time error (NTP: up to 1 ms) and a known
drift (up to 5 parts per million), the ranks' collective ends scattered by
a delay of 0-50 us. Runs `rlscope merge --quiet --out` under
/usr/bin/time and prints its wall time and peak RSS, the input size, and
how far each node's recovered clock is from the truth at the first and
last collective (the ground truth is known: the files were made from it).
Record the output, with date and machine, in scripts/bench/RESULTS.md.

  merge_scale.py [--rlscope BIN] [--nodes N] [--ranks R] [--collectives K] [--seed S]
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MS = 1_000_000
REALTIME_BASE = 1_796_000_000_000_000_000  # A wall-clock instant, ns.


def node_report(node, ranks, collectives, clock, rng):
    """A node's report.json; `clock` maps a true ns to the node's clock."""
    processes, rows = [], []
    world = ranks * args.nodes
    for local in range(ranks):
        rank = node * ranks + local
        pid = 1000 + local  # Every node reuses the same pids.
        calls = []
        for k in range(collectives):
            true_end = 10_000 * MS + k * 10 * MS
            arrival = true_end - rng.randrange(50_000, 5 * MS)
            end = true_end + rng.randrange(0, 50_000)
            calls.append([clock(arrival), clock(end), 0])
        begin = 9_000 * MS
        processes.append({
            "pid": pid, "ppid": 999, "argv": ["python3", "train.py"],
            "begin_ns": clock(begin), "end_ns": clock(10_000 * MS + collectives * 10 * MS),
            "begin_unix_ns": REALTIME_BASE + begin + clock.realtime_error,
            "traced_thread_ns": collectives * 10 * MS,
            "launcher_rank": {"launcher": "torchrun", "rank": rank, "world_size": world, "local_rank": local},
            "collectives": {"operations": ["backprop"], "calls": calls},
        })
        for operation, category, share in (("backprop", "Communication", 0.3), ("backprop", "Backend", 0.4),
                                           ("simulation", "Python", 0.3)):
            rows.append({"process": pid, "operation": operation, "resource": "CPU", "category": category,
                         "ns": int(collectives * 10 * MS * share)})
    return {"schema": "rlscope.report/1", "command": ["torchrun", "train.py"], "corrected": False,
            "rows": rows, "processes": processes}


class NodeClock:
    def __init__(self, offset, drift, realtime_error):
        self.offset, self.drift, self.realtime_error = offset, drift, realtime_error

    def __call__(self, true_ns):
        return true_ns - self.offset - round(self.drift * (true_ns - 10_000 * MS))


def main():
    rlscope = args.rlscope or os.path.join(ROOT, "build", "bin", "rlscope")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="rlscope-merge-scale-")
    try:
        dirs, clocks, size = [], [], 0
        for node in range(args.nodes):
            clock = NodeClock(0, 0, 0) if node == 0 else NodeClock(
                # Booted up to a day earlier or 5 s later than node 0: a
                # monotonic time is never negative (the merge refuses one).
                rng.randrange(-86_400_000 * MS, 5_000 * MS), rng.uniform(-5e-6, 5e-6),
                rng.randrange(-MS, MS))
            # The true clock is node 0's; a node's real-time clock reads the
            # true time plus its error, whatever its monotonic clock reads.
            directory = os.path.join(work, "node%03d" % node)
            os.mkdir(directory)
            with open(os.path.join(directory, "report.json"), "w") as f:
                json.dump(node_report(node, args.ranks, args.collectives, clock, rng), f)
            size += os.path.getsize(os.path.join(directory, "report.json"))
            dirs.append(directory)
            clocks.append(clock)
        out = os.path.join(work, "job")
        timed = subprocess.run(["/usr/bin/time", "-v", rlscope, "merge", "--quiet", "--out", out, *dirs],
                               capture_output=True, text=True)
        if timed.returncode != 0:
            sys.exit("merge failed: " + timed.stderr[-2000:])
        wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", timed.stderr).group(1)
        rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timed.stderr).group(1))
        with open(os.path.join(out, "job.json")) as f:
            job = json.load(f)
        errors, by = [], {}
        first, last = 10_000 * MS, 10_000 * MS + (args.collectives - 1) * 10 * MS
        for clock, node in zip(clocks[1:], job["nodes"][1:]):
            c = node["clock"]
            by[c["aligned_by"]] = by.get(c["aligned_by"], 0) + 1
            drift = (c["drift_ppm"] or 0) * 1e-6
            for true_ns in (first, last):
                seen = clock(true_ns)
                mapped = seen + c["offset_ns"] + round(drift * (seen - (c["anchor_ns"] or 0)))
                errors.append(abs(mapped - true_ns))
        errors.sort()
        ranks = len(job["jobs"][0]["ranks"]) if job["jobs"] else 0
        print("| nodes | ranks | collectives/rank | report.json in | merge wall | peak RSS | ranks joined | "
              "aligned by | clock error at ends: median, max |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("| %d | %d | %d | %.1f MB | %s | %.0f MB | %d | %s | %.1f us, %.1f us |" % (
            args.nodes, args.nodes * args.ranks, args.collectives, size / 1e6, wall, rss_kb / 1024, ranks,
            ", ".join("%s %d" % item for item in sorted(by.items())), errors[len(errors) // 2] / 1e3,
            errors[-1] / 1e3))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rlscope", default="")
    parser.add_argument("--nodes", type=int, default=16)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--collectives", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    main()
