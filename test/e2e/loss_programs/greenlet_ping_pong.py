"""Two greenlets switch back and forth SWITCHES times; from switch 300 on,
each turn makes a native call from late_work(). Every switch() call returns
on another greenlet's stack, never on its own."""
import sys
import numpy as np
from greenlet import greenlet

SWITCHES = int(sys.argv[1])
a = np.ones(4)

def late_work():
    return a.dot(a)

def ping():
    for i in range(SWITCHES):
        if i >= 300:
            late_work()
        pong_g.switch()

def pong():
    while True:
        ping_g.switch()

ping_g = greenlet(ping)
pong_g = greenlet(pong)
ping_g.switch()
print("done")
