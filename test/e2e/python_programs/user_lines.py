"""The user's lines behind native calls that library code makes, where the
library is entered with no call reported from the user's frame: a context
manager's __enter__ and a __getitem__ (run by the interpreter, not by a
call instruction). Under sys.monitoring the user's frame reports only its
calls, and some of its call sites stop reporting once disabled, so its
line must be read from the frame. Needs the `gauges` library the test
writes into a site-packages folder of its own.

  user_lines.py STEPS
"""
import sys

import gauges


class Plain:
    """Calling a class: a call site sys.monitoring stops reporting."""


def main(steps):
    gauge = gauges.Gauge()
    total = 0.0
    for i in range(steps):
        gauges.note(i)
        Plain()
        with gauge:
            total += gauge[i]
    print(round(total, 3))


if __name__ == "__main__":
    main(int(sys.argv[1]))
