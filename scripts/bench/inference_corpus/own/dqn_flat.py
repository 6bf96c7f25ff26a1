"""A flat, CleanRL-like DQN script: one file, the training loop inline at
module level, and a hand-written environment whose class name says nothing
about being an environment."""
import argparse
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CorridorWorld:
    """Walk left or right along a corridor; reward at the right end."""

    def __init__(self, length=8, seed=0):
        self.length = length
        self.rng = np.random.default_rng(seed)
        self.position = 0
        self.t = 0

    def reset(self):
        self.position = int(self.rng.integers(0, self.length // 2))
        self.t = 0
        return self._observe(), {}

    def step(self, action):
        self.position = max(0, min(self.length - 1, self.position + (1 if action == 1 else -1)))
        self.t += 1
        terminated = self.position == self.length - 1
        truncated = self.t >= 4 * self.length
        reward = 1.0 if terminated else -0.01
        return self._observe(), reward, terminated, truncated, {}

    def _observe(self):
        obs = np.zeros(self.length, dtype=np.float32)
        obs[self.position] = 1.0
        return obs


class QNetwork(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(n_obs, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                     nn.Linear(64, n_actions))

    def forward(self, x):
        return self.network(x)


parser = argparse.ArgumentParser()
parser.add_argument("--total-timesteps", type=int, default=800)
parser.add_argument("--learning-starts", type=int, default=100)
parser.add_argument("--batch-size", type=int, default=64)
args = parser.parse_args()
random.seed(1)
np.random.seed(1)
torch.manual_seed(1)
torch.set_num_threads(1)
env = CorridorWorld()
q_network = QNetwork(env.length, 2)
target_network = QNetwork(env.length, 2)
target_network.load_state_dict(q_network.state_dict())
optimizer = torch.optim.Adam(q_network.parameters(), lr=1e-3)
capacity = 5000
obs_store = np.zeros((capacity, env.length), dtype=np.float32)
next_obs_store = np.zeros((capacity, env.length), dtype=np.float32)
action_store = np.zeros(capacity, dtype=np.int64)
reward_store = np.zeros(capacity, dtype=np.float32)
done_store = np.zeros(capacity, dtype=np.float32)
stored = 0
start_time = time.time()
obs, _ = env.reset()
episode_return = 0.0
for global_step in range(args.total_timesteps):
    epsilon = max(0.05, 1.0 - global_step / (0.5 * args.total_timesteps))
    if random.random() < epsilon:
        action = random.randint(0, 1)
    else:
        q_values = q_network(torch.as_tensor(obs).unsqueeze(0))
        action = int(torch.argmax(q_values, dim=1).item())
    next_obs, reward, terminated, truncated, _ = env.step(action)
    episode_return += reward
    slot = stored % capacity
    obs_store[slot], next_obs_store[slot], action_store[slot] = obs, next_obs, action
    reward_store[slot], done_store[slot] = reward, float(terminated)
    stored += 1
    if terminated or truncated:
        obs, _ = env.reset()
        episode_return = 0.0
    else:
        obs = next_obs
    if global_step > args.learning_starts:
        idx = np.random.randint(0, min(stored, capacity), size=args.batch_size)
        b_obs, b_next = torch.as_tensor(obs_store[idx]), torch.as_tensor(next_obs_store[idx])
        b_actions, b_rewards = torch.as_tensor(action_store[idx]), torch.as_tensor(reward_store[idx])
        b_dones = torch.as_tensor(done_store[idx])
        with torch.no_grad():
            target_max, _ = target_network(b_next).max(dim=1)
            td_target = b_rewards + 0.99 * target_max * (1 - b_dones)
        old_val = q_network(b_obs).gather(1, b_actions.unsqueeze(1)).squeeze()
        loss = F.mse_loss(td_target, old_val)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if global_step % 100 == 0:
            target_network.load_state_dict(q_network.state_dict())
            print(f"step {global_step} loss {loss.item():.4f} sps {int(global_step / (time.time() - start_time))}")
print("done")
