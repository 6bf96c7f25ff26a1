"""A tiny RL-shaped loop with numpy only (no torch): the names follow the
conventions the default rules recognise. Prints deterministic output."""
import os
import sys
import threading

import numpy as np


class CartPoleEnv:
    def __init__(self):
        self.state = np.zeros(4)

    def reset(self):
        self.state = np.zeros(4)
        return self.state

    def step(self, action):
        # np.dot is a builtin function: the profile hook sees it (numpy's
        # ufuncs and operators are reached through type slots and stay
        # Python time; see the README).
        for _ in range(20):
            self.state = np.tanh(np.dot(self.state, np.eye(4)) + 0.01 * action)
        return self.state, 1.0, False


class ReplayBuffer:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(np.asarray(item).copy())

    def sample(self, n):
        return np.stack(self.items[-n:])


class Agent:
    def __init__(self):
        self.weights = np.ones((4, 2))

    def select_action(self, obs):
        return int(np.argmax(obs @ self.weights))

    def update(self, batch):
        gradient = batch.T @ np.ones((len(batch), 2))
        self.weights -= 1e-3 * gradient


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    env, buffer, agent = CartPoleEnv(), ReplayBuffer(), Agent()
    obs = env.reset()
    explicit = "--explicit" in sys.argv
    for step in range(steps):
        action = agent.select_action(obs)
        if explicit:
            import rlscope

            with rlscope.operation("custom_step"):
                obs, reward, done = env.step(action)
        else:
            obs, reward, done = env.step(action)
        buffer.add(obs)
        if step % 10 == 9:
            agent.update(buffer.sample(8))
    if "--thread" in sys.argv:
        worker = threading.Thread(target=lambda: [CartPoleEnv().step(1) for _ in range(200)], name="env-worker")
        worker.start()
        worker.join()
    if "--fork" in sys.argv:
        pid = os.fork()
        if pid == 0:
            child_env = CartPoleEnv()
            for _ in range(200):
                child_env.step(0)
            os._exit(0)
        os.waitpid(pid, 0)
    print("weights", np.round(agent.weights, 6).tolist())


if __name__ == "__main__":
    main()
