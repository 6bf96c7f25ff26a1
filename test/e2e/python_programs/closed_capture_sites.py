"""A loop whose call sites run while capture is closed and then inside
windows (rlscope run --capture-range api). Under sys.monitoring rlscope
disables a site once capture has been closed for 100 ms; each window must
see all of its calls again, also a flat loop of nothing but such calls,
where no function starts to notice the window opened. A C callable
standing in for a jitted policy (a C function with the Python function it
compiles as __wrapped__) opens an operation whether capture is open or
not, so its instances are counted throughout.

  closed_capture_sites.py ROUNDS CALLS

Prints, as JSON, what was done: the ground truth of the checks."""
import _hashlib
import ctypes
import json
import sys
import time

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
        total += _hashlib.compare_digest(str(i), "0")
    return total


def main():
    rounds, calls = int(sys.argv[1]), int(sys.argv[2])
    act = compiled(Policy().act)
    for _ in range(rounds):
        time.sleep(0.12)  # Closed long enough for its sites to be disabled.
        roots(calls)
        act()
        with rlscope.capture():
            roots(calls)
            act()
    print(json.dumps({"rounds": rounds, "calls": calls}))


main()
# The flat loop: the same site closed, then inside a window.
total = 0.0
for phase in ("closed", "open"):
    if phase == "open":
        rlscope.start()
    else:
        time.sleep(0.12)
    for i in range(int(sys.argv[2])):
        total += _hashlib.compare_digest(str(i + 1), "0")
    if phase == "open":
        rlscope.stop()
