"""A vectorised environment of subprocess workers over pipes (the
SubprocVecEnv pattern): the learner steps N copies of a hand-written
environment in other processes, an actor-critic learns from the batches."""
import multiprocessing as mp

import numpy as np
import torch
import torch.nn as nn


class BalanceTask:
    """A cart-pole-like balance task with linearised dynamics."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
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
        x_acc = 0.1 * force - 0.05 * theta_acc
        self.s = self.s + 0.02 * np.array([x_dot, x_acc, theta_dot, theta_acc])
        self.t += 1
        done = abs(self.s[2]) > 0.2 or abs(self.s[0]) > 2.4 or self.t >= 200
        return self.s.astype(np.float32), 1.0, done


def worker(remote, seed):
    task = BalanceTask(seed)
    while True:
        command, data = remote.recv()
        if command == "step":
            obs, reward, done = task.step(data)
            if done:
                obs = task.reset()
            remote.send((obs, reward, done))
        elif command == "reset":
            remote.send(task.reset())
        else:
            remote.close()
            break


class PipeWorkers:
    def __init__(self, n):
        ctx = mp.get_context("fork")
        self.remotes, self.processes = [], []
        for i in range(n):
            local, remote = ctx.Pipe()
            process = ctx.Process(target=worker, args=(remote, i), daemon=True)
            process.start()
            remote.close()
            self.remotes.append(local)
            self.processes.append(process)

    def reset(self):
        for remote in self.remotes:
            remote.send(("reset", None))
        return np.stack([remote.recv() for remote in self.remotes])

    def step(self, actions):
        for remote, action in zip(self.remotes, actions):
            remote.send(("step", int(action)))
        results = [remote.recv() for remote in self.remotes]
        obs, rewards, dones = zip(*results)
        return np.stack(obs), np.array(rewards, dtype=np.float32), np.array(dones, dtype=np.float32)

    def close(self):
        for remote in self.remotes:
            remote.send(("close", None))
        for process in self.processes:
            process.join()


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 64), nn.Tanh())
        self.pi = nn.Linear(64, 2)
        self.v = nn.Linear(64, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    envs = PipeWorkers(2)
    model = ActorCritic()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=7e-4)
    obs = envs.reset()
    for update in range(60):
        log_probs, values, rewards, masks, entropies = [], [], [], [], []
        for _ in range(5):
            logits, value = model(torch.as_tensor(obs))
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs, reward, done = envs.step(action.numpy())
            log_probs.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(torch.as_tensor(reward))
            masks.append(1.0 - torch.as_tensor(done))
        with torch.no_grad():
            _, next_value = model(torch.as_tensor(obs))
        returns, running = [], next_value
        for r, m in zip(reversed(rewards), reversed(masks)):
            running = r + 0.99 * running * m
            returns.insert(0, running)
        advantage = torch.stack(returns) - torch.stack(values)
        loss = (-(torch.stack(log_probs) * advantage.detach()).mean() + 0.5 * advantage.pow(2).mean()
                - 0.01 * torch.stack(entropies).mean())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    envs.close()
    print("loss", float(loss))


if __name__ == "__main__":
    main()
