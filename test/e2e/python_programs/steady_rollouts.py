"""Rollouts for a fixed time: a numpy walker env (reset/step, a rule's env
API) driven by a linear policy, inside one `rlscope.operation`. Most of
its records are made inside env steps, so records lost mid-run (a stalled
collector) most likely cut an env step's pop.

  steady_rollouts.py SECONDS   prints {"steps": N, "seconds": S}
"""
import json
import sys
import time

import numpy as np

import rlscope


class Walker:
    def __init__(self):
        self.position = np.zeros(4)

    def reset(self):
        self.position[:] = 0.0
        return self.position.copy()

    def step(self, action):
        # Many small numpy calls: the step is where the records are made.
        for _ in range(30):
            self.position = np.clip(self.position + 0.01 * np.tanh(action), -1.0, 1.0)
        return self.position.copy(), float(np.sum(self.position)), bool(np.abs(self.position).max() >= 1.0)


def main(seconds):
    env = Walker()
    weights = np.full((4, 4), 0.1)
    steps = 0
    begin = time.monotonic()
    with rlscope.operation("rollouts"):
        while time.monotonic() - begin < seconds:
            observation = env.reset()
            for _ in range(50):
                action = observation @ weights + 1.0
                observation, reward, done = env.step(action)
                steps += 1
                if done:
                    break
    print(json.dumps({"steps": steps, "seconds": time.monotonic() - begin}))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
