"""A thread that never blocks: a pure-Python loop of SECONDS wall time,
meant to run where it is kept off the CPUs (at a low priority, NICE,
beside busy processes). All of its time is computing or waiting for a
CPU, none of it Wait. Prints, last, {"loop_ns": the loop's wall time}.

  starved_loop.py [SECONDS [NICE]]   (default 3 s; NICE: added to its own
                                     niceness first, default 0)
"""
import json
import os
import sys
import time


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    os.nice(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    begin = time.monotonic_ns()
    count = 0
    while time.monotonic_ns() - begin < seconds * 1e9:
        count += 1
    print(json.dumps({"loop_ns": time.monotonic_ns() - begin}), flush=True)


if __name__ == "__main__":
    main()
