"""The positive control: a DQN written with the names rlscope's default
rules know (CartPoleEnv.step/reset, DQNAgent.select_action / update,
ReplayBuffer.add / sample, QNetwork.forward). Inference that gets these
wrong is broken, not merely incomplete."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CartPoleEnv:
    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.s = np.zeros(4)
        self.t = 0

    def reset(self):
        self.s = self.rng.uniform(-0.05, 0.05, size=4)
        self.t = 0
        return self.s.astype(np.float32)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.s
        force = 10.0 if action == 1 else -10.0
        theta_acc = 9.8 * theta - 0.1 * force
        self.s = self.s + 0.02 * np.array([x_dot, 0.1 * force - 0.05 * theta_acc, theta_dot, theta_acc])
        self.t += 1
        done = abs(self.s[2]) > 0.2 or abs(self.s[0]) > 2.4 or self.t >= 200
        return self.s.astype(np.float32), 1.0, done


class ReplayBuffer:
    def __init__(self, capacity):
        self.items, self.capacity = [], capacity

    def add(self, *transition):
        if len(self.items) == self.capacity:
            self.items.pop(0)
        self.items.append(transition)

    def sample(self, n):
        batch = random.sample(self.items, n)
        return [torch.as_tensor(np.array(column)) for column in zip(*batch)]


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, x):
        return self.layers(x)


class DQNAgent:
    def __init__(self):
        self.q, self.target = QNetwork(), QNetwork()
        self.target.load_state_dict(self.q.state_dict())
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=1e-3)
        self.updates = 0

    def select_action(self, obs, epsilon):
        if random.random() < epsilon:
            return random.randint(0, 1)
        with torch.no_grad():
            return int(self.q(torch.as_tensor(obs).unsqueeze(0)).argmax(1).item())

    def update(self, buffer, batch_size):
        obs, actions, rewards, next_obs, dones = buffer.sample(batch_size)
        with torch.no_grad():
            target = rewards.float() + 0.99 * (1 - dones.float()) * self.target(next_obs).max(1).values
        q = self.q(obs).gather(1, actions.long().unsqueeze(1)).squeeze(1)
        loss = F.mse_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.updates += 1
        if self.updates % 100 == 0:
            self.target.load_state_dict(self.q.state_dict())
        return loss.item()


def main():
    random.seed(0)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env, agent, buffer = CartPoleEnv(), DQNAgent(), ReplayBuffer(5000)
    obs = env.reset()
    for step in range(1200):
        action = agent.select_action(obs, max(0.05, 1 - step / 600))
        next_obs, reward, done = env.step(action)
        buffer.add(obs, action, reward, next_obs, float(done))
        obs = env.reset() if done else next_obs
        if step >= 100:
            agent.update(buffer, 64)
    print("updates", agent.updates)


if __name__ == "__main__":
    main()
