"""A training-style loop of the standard library only (runs on any
CPython 3.10+): each step an env step, an acting call and a few hundred C
calls (math, struct, json's encoder). Prints the loop's own wall time
(time.perf_counter around it), so a benchmark compares the hooks' cost
without rlscope run's start and end.

  closed_capture_loop.py STEPS
"""
import json
import math
import struct
import sys
import time


class GridEnv:
    def __init__(self):
        self.state = [0.0] * 8

    def step(self, action):
        for i in range(len(self.state)):
            self.state[i] = math.sin(self.state[i] + action * 0.01 + i)
        return struct.pack("8d", *self.state), 1.0


class Agent:
    def act(self, observation):
        values = struct.unpack("8d", observation)
        return int(math.fsum(math.tanh(v) for v in values) > 0)


def train_on(history):
    total = 0.0
    for row in history:
        total += math.sqrt(abs(row)) + math.log1p(abs(row))
    return json.dumps({"total": total})


def main():
    steps = int(sys.argv[1])
    env, agent = GridEnv(), Agent()
    history = []
    observation, _ = env.step(0)
    start = time.perf_counter()
    for step in range(steps):
        action = agent.act(observation)
        observation, reward = env.step(action)
        history.append(reward * action)
        if step % 50 == 49:
            train_on(history)
            history.clear()
    print("loop_s %.6f" % (time.perf_counter() - start))


main()
