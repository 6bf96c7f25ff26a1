"""Each greenlet starts the next from inside a switch() call, DEPTH deep,
so DEPTH native calls are open at once; the innermost then makes 100
native calls from late_work(). With --fork, the process then forks and
the child makes 100 more and exits."""
import os
import sys

import numpy as np
from greenlet import greenlet

DEPTH = int(sys.argv[1])
a = np.ones(4)


def late_work():
    return a.dot(a)


def step(i):
    if i < DEPTH:
        greenlet(step).switch(i + 1)
    else:
        for _ in range(100):
            late_work()


step(0)
if "--fork" in sys.argv:
    child = os.fork()
    if child == 0:
        for _ in range(100):
            late_work()
        sys.exit(0)
    os.waitpid(child, 0)
print("done")
