"""A numpy program whose phases no rule knows: plain functions and a class
with names of no RL library or convention. Its time is in no operation,
and the report must say where it went. Prints, last, the seconds its own
clock measured inside Kiln.fire (the ground truth of the e2e test).

  opaque_phases.py ROUNDS
"""
import json
import sys
import time

import numpy as np


class Kiln:
    def __init__(self, size):
        self.rng = np.random.default_rng(7)
        self.size = size

    def fire(self):
        # The heavy phase: large sorts.
        clay = self.rng.random(self.size)
        return float(np.sort(clay)[self.size // 2])


def glaze(value):
    # The light phase.
    return float(np.cumsum(np.full(64, value))[-1])


def main():
    rounds = int(sys.argv[1])
    kiln = Kiln(200_000)
    fired = 0.0
    total = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        value = kiln.fire()
        fired += time.perf_counter() - start
        total += glaze(value)
    print(json.dumps({"fire_s": fired, "total": total}))


main()
