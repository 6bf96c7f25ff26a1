"""A thread that never blocks: a pure-Python loop of SECONDS wall time,
meant to run where it is kept off the CPUs (at `nice -n 19` beside busy
processes). All of its time is computing or waiting for a CPU, none of
it Wait. Prints, last, {"loop_ns": the loop's wall time}.

  starved_loop.py [SECONDS]      (default 3)
"""
import json
import sys
import time


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    begin = time.monotonic_ns()
    count = 0
    while time.monotonic_ns() - begin < seconds * 1e9:
        count += 1
    print(json.dumps({"loop_ns": time.monotonic_ns() - begin}), flush=True)


if __name__ == "__main__":
    main()
