"""An RL training script written the way users write them, with nothing
named after rlscope's conventions: a flat loop, an env class called Pole
(derived from the user's own EnvBase) or Maze (derived from Environment),
a torch "Brain" whose methods are think/judge, an "Experience" store with
put/draw, the training step written inline in the loop.

  unconventional_rl.py dqn STEPS | ppo ITERATIONS | a2c UPDATES

Prints one JSON line with what it did (the test's ground truth): greedy
forward passes (acting), env steps and resets, training steps, buffer calls.
"""
import json
import random
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class EnvBase:
    pass


class Pole(EnvBase):
    def __init__(self):
        self.state = np.zeros(4, dtype=np.float32)
        self.t = 0

    def reset(self):
        self.state = np.random.uniform(-0.05, 0.05, 4).astype(np.float32)
        self.t = 0
        return self.state

    def step(self, action):
        x, xd, th, thd = (float(v) for v in self.state)
        for _ in range(10):
            thd += (0.1 if action else -0.1) * 0.02 + 0.01 * np.sin(th)
            th += 0.02 * thd
            xd += (1 if action else -1) * 0.02
            x += 0.02 * xd
        self.state = np.array([x, xd, th, thd], dtype=np.float32)
        self.t += 1
        return self.state, 1.0, abs(th) > 0.5 or self.t >= 100


class Environment:
    pass


class Maze(Environment):
    def __init__(self, size=6):
        self.size = size
        self.pos = np.zeros(2)

    def reset(self):
        self.pos = np.zeros(2)
        return np.concatenate([self.pos, np.ones(2)]).astype(np.float32)

    def step(self, action):
        moves = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]])
        self.pos = np.clip(self.pos + moves[action], 0, self.size - 1)
        done = bool((self.pos == self.size - 1).all())
        obs = np.concatenate([self.pos / self.size, np.ones(2)]).astype(np.float32)
        return obs, (1.0 if done else -0.01), done


class Brain(nn.Module):
    def __init__(self, outputs):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.head = nn.Linear(64, outputs)
        self.value = nn.Linear(64, 1)

    def forward(self, x):
        return self.head(self.body(x))

    def think(self, obs):
        hidden = self.body(obs)
        dist = torch.distributions.Categorical(logits=self.head(hidden))
        action = dist.sample()
        return action, dist.log_prob(action), self.value(hidden).squeeze(-1)

    def judge(self, obs, actions):
        hidden = self.body(obs)
        dist = torch.distributions.Categorical(logits=self.head(hidden))
        return dist.log_prob(actions), dist.entropy(), self.value(hidden).squeeze(-1)


class Experience:
    def __init__(self, capacity):
        self.obs = np.zeros((capacity, 4), np.float32)
        self.next_obs = np.zeros((capacity, 4), np.float32)
        self.actions = np.zeros(capacity, np.int64)
        self.rewards = np.zeros(capacity, np.float32)
        self.dones = np.zeros(capacity, np.float32)
        self.capacity, self.cursor, self.count = capacity, 0, 0

    def put(self, obs, action, reward, next_obs, done):
        i = self.cursor
        self.obs[i], self.actions[i], self.rewards[i], self.next_obs[i], self.dones[i] = obs, action, reward, next_obs, done
        self.cursor = (i + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)

    def draw(self, n):
        idx = np.random.randint(0, self.count, n)
        return (torch.from_numpy(self.obs[idx]), torch.from_numpy(self.actions[idx]),
                torch.from_numpy(self.rewards[idx]), torch.from_numpy(self.next_obs[idx]),
                torch.from_numpy(self.dones[idx]))


def dqn(steps):
    did = dict(greedy=0, env_steps=0, resets=0, train_steps=0, buffer_calls=0)
    env = Pole()
    online, target = Brain(2), Brain(2)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-3)
    memory = Experience(5000)
    obs = env.reset()
    did["resets"] += 1
    for step in range(steps):
        epsilon = max(0.1, 1.0 - step / (steps / 2))
        if random.random() < epsilon:
            action = random.randrange(2)
        else:
            action = int(torch.argmax(online(torch.from_numpy(obs)), dim=0))
            did["greedy"] += 1
        next_obs, reward, done = env.step(action)
        did["env_steps"] += 1
        memory.put(obs, action, reward, next_obs, done)
        did["buffer_calls"] += 1
        if done:
            obs = env.reset()
            did["resets"] += 1
        else:
            obs = next_obs
        if step >= 100 and step % 2 == 0:
            o, a, r, o2, d = memory.draw(64)
            did["buffer_calls"] += 1
            with torch.no_grad():
                best_next = target(o2).max(dim=1).values
                wanted = r + 0.99 * best_next * (1 - d)
            predicted = online(o).gather(1, a.view(-1, 1)).squeeze(1)
            loss = F.smooth_l1_loss(predicted, wanted)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            did["train_steps"] += 1
            if step % 50 == 0:
                for t, p in zip(target.parameters(), online.parameters()):
                    t.data.mul_(0.5).add_(0.5 * p.data)
    return did


def ppo(iterations, horizon=64):
    did = dict(greedy=0, env_steps=0, resets=0, train_steps=0, buffer_calls=0)
    env = Maze()
    brain = Brain(4)
    optimizer = torch.optim.Adam(brain.parameters(), lr=3e-4)
    obs = torch.from_numpy(env.reset())
    did["resets"] += 1
    for iteration in range(iterations):
        states = torch.zeros(horizon, 4)
        actions = torch.zeros(horizon, dtype=torch.int64)
        logps, values, rewards = torch.zeros(horizon), torch.zeros(horizon), torch.zeros(horizon)
        for t in range(horizon):
            states[t] = obs
            with torch.no_grad():
                action, logp, value = brain.think(obs)
            did["greedy"] += 1
            actions[t], logps[t], values[t] = action, logp, value
            next_obs, reward, done = env.step(int(action))
            did["env_steps"] += 1
            rewards[t] = reward
            if done:
                next_obs = env.reset()
                did["resets"] += 1
            obs = torch.from_numpy(next_obs)
        returns = torch.zeros(horizon)
        running = 0.0
        for t in reversed(range(horizon)):
            running = rewards[t] + 0.99 * running
            returns[t] = running
        advantages = returns - values
        for epoch in range(2):
            for start in range(0, horizon, 16):
                idx = slice(start, start + 16)
                new_logp, entropy, new_value = brain.judge(states[idx], actions[idx])
                ratio = (new_logp - logps[idx]).exp()
                policy_loss = -torch.min(ratio * advantages[idx], ratio.clamp(0.8, 1.2) * advantages[idx]).mean()
                loss = policy_loss + 0.5 * (new_value - returns[idx]).pow(2).mean() - 0.01 * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(brain.parameters(), 0.5)
                optimizer.step()
        did["train_steps"] += 1
    return did


def a2c(updates, horizon=5):
    """A2C written inline: the policy's distribution is evaluated at the
    chosen action after the env step (log-probability, entropy), outside
    any module method."""
    did = dict(greedy=0, env_steps=0, resets=0, train_steps=0, buffer_calls=0, evaluations=0)
    env = Maze()
    brain = Brain(4)
    optimizer = torch.optim.RMSprop(brain.parameters(), lr=7e-4)
    obs = torch.from_numpy(env.reset())
    did["resets"] += 1
    for update in range(updates):
        log_probs, entropies, values, rewards = [], [], [], []
        for t in range(horizon):
            hidden = brain.body(obs)
            dist = torch.distributions.Categorical(logits=brain.head(hidden))
            action = dist.sample()
            did["greedy"] += 1
            next_obs, reward, done = env.step(int(action))
            did["env_steps"] += 1
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            did["evaluations"] += 2
            values.append(brain.value(hidden).squeeze(-1))
            rewards.append(reward)
            if done:
                next_obs = env.reset()
                did["resets"] += 1
            obs = torch.from_numpy(next_obs)
        returns, running = [], 0.0
        for reward in reversed(rewards):
            running = reward + 0.99 * running
            returns.insert(0, running)
        advantage = torch.tensor(returns) - torch.stack(values)
        loss = (-(torch.stack(log_probs) * advantage.detach()).mean() + 0.5 * advantage.pow(2).mean()
                - 0.01 * torch.stack(entropies).mean())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        did["train_steps"] += 1
    return did


if __name__ == "__main__":
    algorithm, amount = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    print(json.dumps({"dqn": dqn, "ppo": ppo, "a2c": a2c}[algorithm](amount)))
