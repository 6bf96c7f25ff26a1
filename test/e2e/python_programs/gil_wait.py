"""A thread that waits for the GIL: `spinner` runs a pure-Python loop
while the main thread holds the GIL in one long C call (sum over a range:
CPython's C loop never offers the GIL to another thread). The spinner is
then blocked, though it makes no call at all, so only the flusher's
readings of its clocks can tell (preload/thread_idle.h). Prints, last,
{"held_ns": how long the main thread held the GIL, measured around the
call}.

  gil_wait.py [SECONDS]      (how long to hold the GIL, default 1)
"""
import json
import sys
import threading
import time

done = False


def spin():
    count = 0
    while not done:
        count += 1


def main():
    global done
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    # Size the call from a short one, before the spinner competes.
    begin = time.perf_counter_ns()
    sum(range(1_000_000))
    per_million_ns = max(time.perf_counter_ns() - begin, 1)
    spinner = threading.Thread(target=spin, name="spinner")
    spinner.start()
    time.sleep(0.2)
    begin = time.perf_counter_ns()
    sum(range(int(seconds * 1e9 / per_million_ns * 1_000_000)))
    held_ns = time.perf_counter_ns() - begin
    time.sleep(0.2)
    done = True
    spinner.join()
    print(json.dumps({"held_ns": held_ns}), flush=True)


if __name__ == "__main__":
    main()
