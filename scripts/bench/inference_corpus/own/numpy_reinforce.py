"""A numpy-only agent (no torch): a linear softmax policy trained with
REINFORCE on a hand-written mountain-car-like task, gradients by hand."""
import sys

import numpy as np


class HillClimb:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros(2)

    def reset(self):
        self.state = np.array([self.rng.uniform(-0.6, -0.4), 0.0])
        return self.features()

    def step(self, action):
        position, velocity = self.state
        velocity = np.clip(velocity + (action - 1) * 0.001 - 0.0025 * np.cos(3 * position), -0.07, 0.07)
        position = np.clip(position + velocity, -1.2, 0.6)
        self.state = np.array([position, velocity])
        return self.features(), -1.0, position >= 0.5

    def features(self):
        position, velocity = self.state
        centers = np.linspace(-1.2, 0.6, 8)
        return np.concatenate([np.exp(-((position - centers) / 0.3) ** 2), [velocity * 10, 1.0]])


def softmax(z):
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


def run(episodes, horizon):
    rng = np.random.default_rng(1)
    hill = HillClimb()
    weights = np.zeros((10, 3))
    baseline = 0.0
    for episode in range(episodes):
        features, actions, rewards = [], [], []
        x = hill.reset()
        for _ in range(horizon):
            probs = softmax(x @ weights)
            a = int(rng.choice(3, p=probs))
            features.append(x)
            actions.append(a)
            x, r, done = hill.step(a)
            rewards.append(r)
            if done:
                break
        returns = np.cumsum(rewards[::-1])[::-1]
        baseline = 0.9 * baseline + 0.1 * returns.mean()
        grad = np.zeros_like(weights)
        for f, a, g in zip(features, actions, returns):
            probs = softmax(f @ weights)
            one_hot = np.eye(3)[a]
            grad += np.outer(f, one_hot - probs) * (g - baseline)
        weights += 1e-4 * grad / len(rewards)
        if episode % 5 == 0:
            print(f"episode {episode} length {len(rewards)}")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 40, 200)
