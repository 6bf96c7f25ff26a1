"""A PPO-style program: an nn.Module agent whose methods have names of the
author's choosing (Brain.think, Brain.evaluate_and_sample), a hand-written
continuous-control environment, rollouts then epochs of minibatch updates."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn


class SwingTask:
    """A pendulum-like swing-up: keep the angle near zero with bounded torque."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.theta = 0.0
        self.omega = 0.0
        self.t = 0

    def reset(self):
        self.theta = float(self.rng.uniform(-math.pi, math.pi))
        self.omega = 0.0
        self.t = 0
        return self._observe()

    def step(self, torque):
        torque = float(np.clip(torque, -2.0, 2.0))
        self.omega = np.clip(self.omega + (-9.8 * math.sin(self.theta) + torque) * 0.05, -8.0, 8.0)
        self.theta = (self.theta + self.omega * 0.05 + math.pi) % (2 * math.pi) - math.pi
        self.t += 1
        cost = self.theta ** 2 + 0.1 * self.omega ** 2 + 0.001 * torque ** 2
        return self._observe(), -cost, self.t >= 100

    def _observe(self):
        return np.array([math.cos(self.theta), math.sin(self.theta), self.omega], dtype=np.float32)


class Brain(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(3, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.mean = nn.Linear(64, 1)
        self.value = nn.Linear(64, 1)
        self.log_std = nn.Parameter(torch.zeros(1))

    def think(self, obs):
        hidden = self.trunk(obs)
        return self.mean(hidden), self.value(hidden).squeeze(-1)

    def evaluate_and_sample(self, obs, action=None):
        mean, value = self.think(obs)
        dist = torch.distributions.Normal(mean, self.log_std.exp())
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(-1), dist.entropy().sum(-1), value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--rollout", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    task = SwingTask()
    brain = Brain()
    optimizer = torch.optim.Adam(brain.parameters(), lr=3e-4)
    obs = task.reset()
    for iteration in range(args.iterations):
        observations, actions, logprobs, rewards, dones, values = [], [], [], [], [], []
        for _ in range(args.rollout):
            with torch.no_grad():
                action, logprob, _, value = brain.evaluate_and_sample(torch.as_tensor(obs).unsqueeze(0))
            torque = action.numpy()[0, 0]
            next_obs, reward, done = task.step(torque)
            if done:
                next_obs = task.reset()
            observations.append(obs)
            actions.append(action[0])
            logprobs.append(logprob[0])
            rewards.append(reward)
            dones.append(float(done))
            values.append(value[0])
            obs = next_obs
        b_obs = torch.as_tensor(np.array(observations))
        b_actions = torch.stack(actions)
        b_logprobs = torch.stack(logprobs)
        b_values = torch.stack(values)
        returns = torch.zeros(args.rollout)
        running = 0.0
        for t in reversed(range(args.rollout)):
            running = rewards[t] + 0.99 * running * (1.0 - dones[t])
            returns[t] = running
        advantages = returns - b_values
        for epoch in range(4):
            for start in range(0, args.rollout, 64):
                mb = slice(start, start + 64)
                _, new_logprob, entropy, new_value = brain.evaluate_and_sample(b_obs[mb], b_actions[mb])
                ratio = (new_logprob - b_logprobs[mb]).exp()
                adv = advantages[mb]
                policy_loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()
                loss = policy_loss + 0.5 * ((new_value - returns[mb]) ** 2).mean() - 0.01 * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(brain.parameters(), 0.5)
                optimizer.step()
        print(f"iteration {iteration} loss {loss.item():.3f} return {sum(rewards):.1f}")


if __name__ == "__main__":
    main()
