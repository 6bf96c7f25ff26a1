"""Raw slowdown of the bundled workloads under `rlscope run` (no overhead
correction): interleaved plain/profiled runs, comparing the training loop's
own wall_s and the whole command's elapsed time (start-up and rlscope's
report included). Prints one line per workload:
  NAME plain_wall_s profiled_wall_s loop_ratio plain_elapsed profiled_elapsed elapsed_ratio

  bench_workload_slowdown.py RLSCOPE WORKLOADS_DIR [PAIRS]
"""
import re
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3"
WORKLOADS = {"dqn": ["dqn.py", "--steps", "3000"], "ppo": ["ppo.py", "--steps", "10000"]}


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    return float(re.search(r"wall_s=([0-9.]+)", result.stdout).group(1)), elapsed


def main():
    rlscope, workloads = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    for name, args in WORKLOADS.items():
        command = [PYTHON, f"{workloads}/{args[0]}", *args[1:], "--quiet"]
        plain, profiled = [], []
        for _ in range(pairs):
            plain.append(timed(command))
            with tempfile.TemporaryDirectory() as out:
                profiled.append(timed([rlscope, "run", "--quiet", "--out", f"{out}/run", "--", *command]))
        loop_plain = statistics.median(p[0] for p in plain)
        loop_profiled = statistics.median(p[0] for p in profiled)
        all_plain = statistics.median(p[1] for p in plain)
        all_profiled = statistics.median(p[1] for p in profiled)
        print(name, f"{loop_plain:.3f}", f"{loop_profiled:.3f}", f"{loop_profiled / loop_plain:.3f}",
              f"{all_plain:.3f}", f"{all_profiled:.3f}", f"{all_profiled / all_plain:.3f}")


if __name__ == "__main__":
    main()
