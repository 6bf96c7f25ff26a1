#!/usr/bin/env python3
"""How well a capture window estimates the whole run: for each workload,
PAIRS interleaved pairs of `rlscope run`s of the same program, one captured
whole and one captured in a window placed by counted instances (`--skip N
--capture M`, or M of every P instances with `--every P`, zero code
change). The windowed report's estimate of the
whole run (report.json capture.whole_run_estimate: per operation, its
per-instance time in the window times its instances in the whole run) is
compared with what the whole run measured of the same operations (its
CPU-side rows; start-up, teardown and time in no operation are not
estimated, so they are left out of both). Both reports are corrected
with --calibration when given.

Prints a line per pair (estimated and measured time of the estimated
operations, the error) and per workload the mean error, its standard
deviation and the range; then the per-operation errors of the mean. The
whole runs differ from each other too: their spread (coefficient of
variation of the measured totals) is printed beside, as the floor under
which an error cannot be told from the machine's noise. Record the output,
with date and machine, in scripts/bench/RESULTS.md.

  extrapolation.py [--rlscope BIN] [--python PY] [--calibration FILE]
                   [--pairs N] [--only NAME[,NAME]]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name: (program arguments, --skip, --capture, --every or None): one
# window in the middle of the run, after DQN's learning starts and
# covering two PPO rollouts; or DQN's run sampled by repeated windows, a
# fifth of it spread over its phases (random actions before learning,
# learning, the greedy evaluation).
WORKLOADS = {
    "dqn": (["scripts/workloads/dqn.py", "--steps", "3000", "--quiet"], 1000, 1000, None),
    "dqn_every": (["scripts/workloads/dqn.py", "--steps", "3000", "--quiet"], 0, 100, 500),
    "ppo": (["scripts/workloads/ppo.py", "--steps", "4096", "--quiet"], 1024, 1024, None),
    "numpy_loop": (["test/e2e/python_programs/capture_loop.py", "30000", "0", "0"], 10000, 10000, None),
}


def run(args, rlscope, python, out, program, window, calibration):
    command = [rlscope, "run", "--quiet", "--out", out]
    if calibration:
        command += ["--calibration", calibration]
    if window:
        command += ["--skip", str(window[0]), "--capture", str(window[1])]
        if window[2]:
            command += ["--every", str(window[2])]
    command += ["--", python] + [os.path.join(ROOT, program[0])] + program[1:]
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def measured_by_operation(report):
    totals = {}
    for row in report["rows"]:
        if row["resource"] != "GPU":
            totals[row["operation"]] = totals.get(row["operation"], 0) + row["ns"]
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rlscope", default=os.path.join(ROOT, "build", "bin", "rlscope"))
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--calibration", default="")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="rlscope-extrapolation-")
    summary = []
    try:
        for name in args.only.split(","):
            program, skip, capture, every = WORKLOADS[name]
            errors, measured_totals, per_operation = [], [], {}
            for pair in range(args.pairs):
                # Alternate which run goes first: a machine that slows down
                # over time biases neither.
                window = (skip, capture, every)
                order = [None, window] if pair % 2 == 0 else [window, None]
                reports = {}
                for window in order:
                    out = os.path.join(scratch, f"{name}{pair}{'w' if window else 'a'}")
                    reports[bool(window)] = run(args, args.rlscope, args.python, out, program, window, args.calibration)
                    shutil.rmtree(out)
                windowed, whole = reports[True], reports[False]
                if not windowed["capture"]["windowed"]:
                    sys.exit(f"{name}: the window did not open")
                estimate = {e["operation"]: e["estimated_ns"] for e in windowed["capture"]["whole_run_estimate"]}
                measured = measured_by_operation(whole)
                estimated_total = sum(estimate.values())
                measured_total = sum(measured.get(op, 0) for op in estimate)
                error = estimated_total / measured_total - 1
                errors.append(error)
                measured_totals.append(measured_total)
                for op, ns in estimate.items():
                    if measured.get(op):
                        per_operation.setdefault(op, []).append(ns / measured[op] - 1)
                print(f"{name} pair {pair + 1}: estimated {estimated_total / 1e6:.1f} ms, measured "
                      f"{measured_total / 1e6:.1f} ms, error {100 * error:+.2f} % (corrected: "
                      f"{windowed['corrected']}/{whole['corrected']})", flush=True)
            spread = statistics.pstdev(measured_totals) / statistics.mean(measured_totals)
            summary.append((name, errors, spread, per_operation))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\n| workload | pairs | error, mean | sd | range | whole runs' spread (cv) | per operation, mean error |")
    print("|---|---|---|---|---|---|---|")
    for name, errors, spread, per_operation in summary:
        ops = ", ".join(f"{op} {100 * statistics.mean(e):+.1f} %" for op, e in sorted(per_operation.items()))
        sd = statistics.stdev(errors) if len(errors) > 1 else 0.0
        print(f"| {name} | {len(errors)} | {100 * statistics.mean(errors):+.2f} % | {100 * sd:.2f} % | "
              f"{100 * min(errors):+.1f}..{100 * max(errors):+.1f} % | {100 * spread:.1f} % | {ops} |")


if __name__ == "__main__":
    main()
