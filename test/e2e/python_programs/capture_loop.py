"""A numpy RL-shaped loop whose middle part is marked for capture, in the
ways a user marks it: `--api` wraps steps [first, last) in `with
rlscope.capture():`; `--signal` sends the process the capture signal at
step `first` (and waits for the collector to see it), so capture opens
there. `--paced SECONDS` instead runs one stretch of steps, 5 ms apart,
until SECONDS after it began, for windows placed by time (--delay,
--duration), and prints how many steps it took. Prints the same output
profiled or not (but --paced's count).

  capture_loop.py STEPS FIRST LAST [--api | --signal | --paced SECONDS]
"""
import os
import signal
import sys
import time

import numpy as np


class GridEnv:
    def __init__(self):
        self.state = np.zeros(4)

    def reset(self):
        self.state = np.zeros(4)
        return self.state

    def step(self, action):
        for _ in range(10):
            self.state = np.tanh(np.dot(self.state, np.eye(4)) + 0.01 * action)
        return self.state, 1.0, False


class Agent:
    def __init__(self):
        self.weights = np.ones((4, 2))

    def select_action(self, obs):
        return int(np.argmax(obs @ self.weights))


def run(env, agent, steps):
    obs = env.reset()
    total = 0.0
    for _ in range(steps):
        obs, reward, _ = env.step(agent.select_action(obs))
        total += reward
    return total


def run_paced(env, agent, seconds):
    end = time.monotonic() + seconds
    obs = env.reset()
    steps = 0
    while time.monotonic() < end:
        obs, _, _ = env.step(agent.select_action(obs))
        steps += 1
        time.sleep(0.005)
    return steps


def main():
    steps, first, last = (int(arg) for arg in sys.argv[1:4])
    env, agent = GridEnv(), Agent()
    if "--paced" in sys.argv:
        print("steps", run_paced(env, agent, float(sys.argv[sys.argv.index("--paced") + 1])))
        return
    total = run(env, agent, first)
    if "--api" in sys.argv:
        import rlscope

        with rlscope.capture():
            total += run(env, agent, last - first)
    elif "--signal" in sys.argv:
        os.kill(os.getpid(), signal.SIGUSR2)
        time.sleep(0.5)  # The preload toggles within one flush interval (20 ms).
        total += run(env, agent, last - first)
    else:
        total += run(env, agent, last - first)
    total += run(env, agent, steps - last)
    print("total reward", total)


if __name__ == "__main__":
    main()
