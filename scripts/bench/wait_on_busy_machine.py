#!/usr/bin/python3
"""How well the Wait category holds on a machine busier than its cores.

Starts HOGS busy loops (one per core by default, `while :; do :; done`),
then profiles, each at `nice -n NICE` so that the hogs get most of the
CPUs, three programs and sets each thread's Wait beside the program's own
measure of its blocked time (the same ground truth as the e2e.wait test):
  - test/e2e/python_programs/blocking_threads.py 1.5: a writer blocked on
    a queue, a reader iterating over a pipe, the main thread computing and
    then blocked in a child's pipe, sleep, an Event and joins;
  - test/e2e/python_programs/gil_wait.py 1: the spinner thread's wait for
    the GIL (truth: how long the main thread held it);
  - test/e2e/python_programs/starved_loop.py SECONDS, a pure-Python loop
    (truth: no Wait at all; a thread kept off the CPUs is waiting for one,
    not blocked).
A thread's blocked time is told from outside it (preload/thread_idle.h);
this is where that goes wrong if it does.

  wait_on_busy_machine.py --rlscope BUILD/bin/rlscope [--python PY ...]
                          [--hogs N] [--nice N] [--seconds S] [--runs N]

Prints one line per thread and run, and a table last: the mean of
rlscope's Wait / truth for each (program, thread) over the runs.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "test", "e2e", "python_programs")


def category_ns(thread, category):
    return sum(row["ns"] for row in thread["rows"] if row["category"] == category)


def profile(rlscope, nice, argv, directory):
    out = os.path.join(directory, "run")
    shutil.rmtree(out, True)
    result = subprocess.run(["nice", "-n", str(nice), rlscope, "run", "--quiet", "--out", out, "--"] + argv,
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed under rlscope run:\n{result.stderr[-2000:]}")
    truth = json.loads([line for line in result.stdout.splitlines() if line.startswith("{")][-1])
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    main = next(p for p in report["processes"] if p["forked_from"] == 0)
    return truth, {thread["name"]: thread for thread in main["threads"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rlscope", required=True)
    parser.add_argument("--python", action="append", help="interpreters to run (default /usr/bin/python3)")
    parser.add_argument("--hogs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--nice", type=int, default=19)
    parser.add_argument("--seconds", type=float, default=4.0, help="the pure-Python loop's length")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    pythons = args.python or ["/usr/bin/python3"]
    names = {python: "python" + subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                               capture_output=True, text=True, check=True).stdout.strip()
             for python in pythons}
    directory = tempfile.mkdtemp(prefix="rlscope-wait-busy-")
    hogs = [subprocess.Popen(["timeout", "3600", "sh", "-c", "while :; do :; done"], stdout=subprocess.DEVNULL)
            for _ in range(args.hogs)]
    ratios = {}
    try:
        time.sleep(0.5)
        for run in range(args.runs):
            for python in pythons:
                name = names[python]
                truth, threads = profile(args.rlscope, args.nice,
                                         [python, os.path.join(PROGRAMS, "blocking_threads.py"), "1.5"], directory)
                measured = {"writer": "writer", "reader": "reader", "main": "MainThread"}
                for who, thread_name in measured.items():
                    wait = category_ns(threads[thread_name], "Wait")
                    blocked = truth["blocked_ns"][who]
                    print(f"{name} run {run} blocking_threads {who}: Wait {wait / 1e9:.2f} s, "
                          f"blocked {blocked / 1e9:.2f} s", flush=True)
                    ratios.setdefault((name, "blocking_threads", who), []).append(wait / blocked)
                truth, threads = profile(args.rlscope, args.nice, [python, os.path.join(PROGRAMS, "gil_wait.py"), "1"],
                                         directory)
                wait = category_ns(threads["spinner"], "Wait")
                print(f"{name} run {run} gil_wait spinner: Wait {wait / 1e9:.2f} s, "
                      f"GIL held {truth['held_ns'] / 1e9:.2f} s", flush=True)
                ratios.setdefault((name, "gil_wait", "spinner"), []).append(wait / truth["held_ns"])
                loop = [python, os.path.join(PROGRAMS, "starved_loop.py"), str(args.seconds)]
                truth, threads = profile(args.rlscope, args.nice, loop, directory)
                thread = threads["MainThread"]
                wait = category_ns(thread, "Wait")
                python_ns = category_ns(thread, "Python")
                print(f"{name} run {run} loop main: Wait {wait / 1e9:.2f} s, Python {python_ns / 1e9:.2f} s, "
                      f"loop {truth['loop_ns'] / 1e9:.2f} s", flush=True)
                ratios.setdefault((name, "loop", "main (Wait/loop, truth 0)"), []).append(wait / truth["loop_ns"])
    finally:
        for hog in hogs:
            hog.terminate()  # timeout passes it on to its loop (a kill would leave the loop running).
            hog.wait()
        shutil.rmtree(directory, True)
    cpus = len(os.sched_getaffinity(0))
    print(f"\n{args.hogs} CPU hogs on {cpus} CPUs, programs at nice {args.nice}, {args.runs} runs")
    print(f"{'python':<12} {'program':<18} {'thread':<28} {'Wait/truth mean':>16} {'min':>6} {'max':>6}")
    for (name, program, who), values in ratios.items():
        print(f"{name:<12} {program:<18} {who:<28} {sum(values) / len(values):16.2f} {min(values):6.2f} "
              f"{max(values):6.2f}")


if __name__ == "__main__":
    main()
