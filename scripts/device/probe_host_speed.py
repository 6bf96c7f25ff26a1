#!/usr/bin/env python3
"""Does the GPU machine's host slow all vCPUs at once? Runs the same pure
Python loop in N processes pinned to different vCPUs at the same time, each
timing 50 ms slices for SECONDS, then prints, per pair of processes, the
correlation of their slice speeds (1: they slow down together, so runs made
side by side see the same machine; 0: each vCPU wanders on its own).

  probe_host_speed.py [SECONDS] [CPU...]     default: 15 s on CPUs 1 5 9 13"""
import multiprocessing as mp
import os
import statistics
import sys
import time


def worker(cpu, seconds, start_at, queue):
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError as e:
        print(f"cpu {cpu}: {e}", file=sys.stderr)
        queue.put((cpu, []))
        return
    while time.time() < start_at:
        pass
    speeds = []
    end = start_at + seconds
    while time.time() < end:
        slice_end = time.perf_counter() + 0.05
        n = 0
        while time.perf_counter() < slice_end:
            for _ in range(1000):
                n += 1
        speeds.append(n)
    queue.put((cpu, speeds))


def correlation(a, b):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va = sum((x - ma) ** 2 for x in a)
    vb = sum((y - mb) ** 2 for y in b)
    return cov / (va * vb) ** 0.5 if va and vb else float("nan")


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 15
    cpus = [int(c) for c in sys.argv[2:]] or [1, 5, 9, 13]
    queue = mp.Queue()
    start_at = time.time() + 1
    procs = [mp.Process(target=worker, args=(c, seconds, start_at, queue)) for c in cpus]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=seconds + 30) for _ in procs)
    results = {cpu: speeds for cpu, speeds in results.items() if speeds}
    for p in procs:
        p.join()
    for cpu, speeds in sorted(results.items()):
        print(f"cpu {cpu}: {len(speeds)} slices, iterations/slice median {statistics.median(speeds):.0f}, "
              f"min {min(speeds)}, max {max(speeds)}, cv {statistics.pstdev(speeds) / statistics.fmean(speeds):.3f}")
    measured = sorted(results)
    for i, a in enumerate(measured):
        for b in measured[i + 1:]:
            print(f"corr cpu {a} vs {b}: {correlation(results[a], results[b]):+.2f}")


if __name__ == "__main__":
    main()
