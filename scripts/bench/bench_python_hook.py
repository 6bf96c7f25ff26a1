"""Time per call, as the Python program sees it, of three kinds of call:
an extension-module C function (recorded as a Python->native transition),
a builtin of the interpreter (filtered out by one range check) and a Python
function (CALL/RETURN events, checked against the operation rules). Run it
plain and under `rlscope run` (run_benchmarks.sh does both) and compare.

Calls come in bursts of 3000 with 2 ms pauses, which lets the flusher keep
up: at most a few tenths of a percent of events are dropped (the report of
the profiled run says how many). The machine's noise only ever adds time,
so the minimum over bursts is the estimate; the median is printed too.
Prints one line per kind: NAME MIN_NS_PER_CALL MEDIAN_NS_PER_CALL.
"""
import _json
import time

BURST = 3000
BURSTS = 300


def python_function():
    return None


def measure(call):
    samples = []
    for _ in range(BURSTS):
        start = time.perf_counter_ns()
        for _ in range(BURST):
            call()
        samples.append((time.perf_counter_ns() - start) / BURST)
        time.sleep(0.002)
    samples.sort()
    return samples[0], samples[len(samples) // 2]


def main():
    encode = _json.encode_basestring_ascii
    items = [1, 2, 3]
    kinds = {
        "extension_c_call": lambda: encode("x"),
        "builtin_c_call": lambda: len(items),
        "python_call": lambda: python_function(),
        "loop_overhead": lambda: None,
    }
    for name, call in kinds.items():
        low, median = measure(call)
        print(name, f"{low:.1f}", f"{median:.1f}")


if __name__ == "__main__":
    main()
