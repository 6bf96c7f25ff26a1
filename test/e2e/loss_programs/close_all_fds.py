"""Makes native calls, closes every fd above stderr (as daemons and
subprocess children do), waits until rlscope has a socket again, then makes
CALLS more native calls from late_work()."""
import os
import stat
import sys
import time

import numpy as np

CALLS = int(sys.argv[1])
a = np.ones(4)


def early_work():
    return a.dot(a)


def waiting_work():
    return a.dot(a)


def late_work():
    return a.dot(a)


def has_socket():
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISSOCK(os.stat(f"/proc/self/fd/{name}").st_mode):
                return True
        except OSError:
            pass
    return False


for _ in range(100):
    early_work()
time.sleep(0.5)  # The flusher (every 20 ms) sends them meanwhile, on a machine not too busy.
os.closerange(3, 4096)
deadline = time.monotonic() + 20
while not has_socket() and time.monotonic() < deadline:
    waiting_work()  # Something to send: the flusher notices the loss on a send.
    time.sleep(0.01)
for _ in range(CALLS):
    late_work()
print("reconnected" if has_socket() else "no socket")
