"""A loop whose call sites run while capture is closed and then inside
windows (rlscope run --capture-range api). Under sys.monitoring rlscope
disables a site while capture is closed; each window must see all of its
calls again. A C callable standing in for a jitted policy (a C function
with the Python function it compiles as __wrapped__) opens an operation
whether capture is open or not, so its instances are counted throughout.

  closed_capture_sites.py ROUNDS CALLS

Prints, as JSON, what was done: the ground truth of the checks."""
import ctypes
import json
import math
import sys

import rlscope


class Policy:
    def act(self):  # Never runs: a C function stands in for its compiled form.
        raise AssertionError("not called")


def compiled(function):
    stand_in = ctypes.CDLL(None).getpid
    stand_in.__wrapped__ = function
    return stand_in


def roots(calls):
    total = 0.0
    for i in range(calls):
        total += math.sqrt(i)
    return total


def main():
    rounds, calls = int(sys.argv[1]), int(sys.argv[2])
    act = compiled(Policy().act)
    for _ in range(rounds):
        roots(calls)  # Capture closed.
        act()
        with rlscope.capture():
            roots(calls)
            act()
    print(json.dumps({"rounds": rounds, "calls": calls}))


main()
