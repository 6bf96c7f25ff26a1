"""A program with a background writer thread, like TensorBoard's
SummaryWriter: the training loop queues scalars, a daemon thread sleeps on
the queue and writes them out. The agent is a small actor-critic on a
hand-written task; acting happens in a method named `decide`."""
import os
import queue
import sys
import tempfile
import threading

import numpy as np
import torch
import torch.nn as nn


class ScalarSink:
    def __init__(self, path):
        self.queue = queue.Queue()
        self.file = open(path, "w")
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def add_scalar(self, tag, value, step):
        self.queue.put((tag, float(value), step))

    def _drain(self):
        while True:
            try:
                item = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            if item is None:
                break
            tag, value, step = item
            self.file.write(f"{step}\t{tag}\t{value:.6f}\n")
            self.file.flush()

    def close(self):
        self.queue.put(None)
        self.thread.join()
        self.file.close()


class Chase:
    """Move a point towards a moving target in 2-D."""

    def __init__(self):
        self.rng = np.random.default_rng(3)
        self.p = np.zeros(2)
        self.q = np.zeros(2)
        self.t = 0

    def reset(self):
        self.p, self.q, self.t = self.rng.normal(size=2), self.rng.normal(size=2), 0
        return np.concatenate([self.p, self.q]).astype(np.float32)

    def step(self, move):
        self.p = self.p + 0.1 * np.clip(move, -1, 1)
        self.q = self.q + 0.02 * self.rng.normal(size=2)
        self.t += 1
        reward = -float(np.linalg.norm(self.p - self.q))
        return np.concatenate([self.p, self.q]).astype(np.float32), reward, self.t >= 50


class Agent:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        self.critic = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=1e-3)

    def decide(self, obs):
        with torch.no_grad():
            mean = self.actor(torch.as_tensor(obs))
        return (mean + 0.3 * torch.randn(2)).numpy()

    def improve(self, obs, moves, rewards):
        obs, moves, rewards = torch.as_tensor(obs), torch.as_tensor(moves), torch.as_tensor(rewards)
        value = self.critic(obs).squeeze(-1)
        advantage = (rewards - value).detach()
        log_prob = -((moves - self.actor(obs)) ** 2).sum(-1) / (2 * 0.09)
        loss = -(log_prob * advantage).mean() + ((rewards - value) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    sink = ScalarSink(os.path.join(tempfile.gettempdir(), f"threaded_logger_{os.getpid()}.tsv"))
    task, agent = Chase(), Agent()
    for episode in range(int(sys.argv[1]) if len(sys.argv) > 1 else 40):
        obs_list, move_list, reward_list = [], [], []
        obs, done = task.reset(), False
        while not done:
            move = agent.decide(obs)
            next_obs, reward, done = task.step(move)
            obs_list.append(obs)
            move_list.append(move.astype(np.float32))
            reward_list.append(reward)
            obs = next_obs
        loss = agent.improve(np.array(obs_list), np.array(move_list), np.array(reward_list, dtype=np.float32))
        sink.add_scalar("loss", loss, episode)
        sink.add_scalar("return", sum(reward_list), episode)
    sink.close()
    os.unlink(sink.file.name)
    print("loss", loss)


if __name__ == "__main__":
    main()
