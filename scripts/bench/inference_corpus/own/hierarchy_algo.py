"""A library-style program like Stable-Baselines3: the work sits in methods
of a deep class hierarchy (BaseAlgorithm -> OffPolicyAlgorithm -> SoftQ),
the buffer and the environment have names of their own, and the user's
script is a few lines at the bottom."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GridMaze:
    """A 5x5 grid; the goal is the far corner."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.cell = (0, 0)
        self.t = 0

    def reset(self):
        self.cell = (int(self.rng.integers(0, 3)), int(self.rng.integers(0, 3)))
        self.t = 0
        return self._observe()

    def step(self, action):
        dx, dy = [(0, 1), (0, -1), (1, 0), (-1, 0)][action]
        self.cell = (min(4, max(0, self.cell[0] + dx)), min(4, max(0, self.cell[1] + dy)))
        self.t += 1
        at_goal = self.cell == (4, 4)
        return self._observe(), (1.0 if at_goal else -0.02), at_goal or self.t >= 50

    def _observe(self):
        obs = np.zeros(25, dtype=np.float32)
        obs[self.cell[0] * 5 + self.cell[1]] = 1.0
        return obs


class TransitionStash:
    """Ring storage of transitions."""

    def __init__(self, capacity, obs_size):
        self.obs = np.zeros((capacity, obs_size), dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_size), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self.capacity, self.count = capacity, 0

    def put(self, obs, action, reward, next_obs, done):
        i = self.count % self.capacity
        self.obs[i], self.actions[i], self.rewards[i], self.next_obs[i], self.dones[i] = obs, action, reward, next_obs, done
        self.count += 1

    def draw(self, n):
        idx = np.random.randint(0, min(self.count, self.capacity), size=n)
        return tuple(torch.as_tensor(a[idx]) for a in (self.obs, self.actions, self.rewards, self.next_obs, self.dones))


class ScoreHead(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, n_out))

    def forward(self, x):
        return self.layers(x)


class BaseAlgorithm:
    def __init__(self, env, seed=0):
        self.env = env
        self.num_timesteps = 0
        torch.manual_seed(seed)
        np.random.seed(seed)
        self._setup_model()

    def _setup_model(self):
        raise NotImplementedError

    def learn(self, total_timesteps):
        raise NotImplementedError


class OffPolicyAlgorithm(BaseAlgorithm):
    def __init__(self, env, learning_starts=100, batch_size=32, train_freq=4, **kwargs):
        self.learning_starts, self.batch_size, self.train_freq = learning_starts, batch_size, train_freq
        super().__init__(env, **kwargs)

    def learn(self, total_timesteps):
        self._last_obs = self.env.reset()
        while self.num_timesteps < total_timesteps:
            self.collect_rollouts(self.train_freq)
            if self.num_timesteps > self.learning_starts:
                self.train(gradient_steps=1)
        return self

    def collect_rollouts(self, n_steps):
        for _ in range(n_steps):
            action = self._pick(self._last_obs)
            new_obs, reward, done = self.env.step(action)
            self.stash.put(self._last_obs, action, reward, new_obs, float(done))
            self._last_obs = self.env.reset() if done else new_obs
            self.num_timesteps += 1

    def _pick(self, obs):
        raise NotImplementedError

    def train(self, gradient_steps):
        raise NotImplementedError


class SoftQ(OffPolicyAlgorithm):
    def _setup_model(self):
        self.scorer = ScoreHead(25, 4)
        self.scorer_target = ScoreHead(25, 4)
        self.scorer_target.load_state_dict(self.scorer.state_dict())
        self.optim = torch.optim.Adam(self.scorer.parameters(), lr=1e-3)
        self.stash = TransitionStash(5000, 25)
        self.updates = 0

    def _pick(self, obs):
        with torch.no_grad():
            logits = self.scorer(torch.as_tensor(obs).unsqueeze(0)) / 0.1
        return int(torch.distributions.Categorical(logits=logits).sample().item())

    def train(self, gradient_steps):
        for _ in range(gradient_steps):
            obs, actions, rewards, next_obs, dones = self.stash.draw(self.batch_size)
            with torch.no_grad():
                next_v = 0.1 * torch.logsumexp(self.scorer_target(next_obs) / 0.1, dim=1)
                target = rewards + 0.99 * (1 - dones) * next_v
            q = self.scorer(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
            loss = F.smooth_l1_loss(q, target)
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            self.updates += 1
            if self.updates % 50 == 0:
                self.scorer_target.load_state_dict(self.scorer.state_dict())


if __name__ == "__main__":
    torch.set_num_threads(1)
    model = SoftQ(GridMaze(), learning_starts=100)
    model.learn(total_timesteps=2000)
    print("updates", model.updates)
