#!/usr/bin/env python3
"""A data-parallel DQN learner over NCCL, one process per GPU, as a user
starts it with torchrun:

    python3 -m torch.distributed.run --standalone --nproc_per_node=N \\
        ddp_learner.py [--steps 400] [--slow-rank R --slow-ms MS] [--cpu]

Each rank acts in its own copy of a small numpy environment (a point that
must be steered to the origin), keeps a replay buffer on its GPU, and
takes a gradient step per environment step on a batch of it; the Q-network
is wrapped in DistributedDataParallel, so every backward pass all-reduces
the gradients (NCCL kernels on the GPU, issued from C++, no Python call).
--slow-rank makes one rank's environment step MS milliseconds slower: a
straggler the others wait for in the all-reduce. --cpu runs the same over
gloo on the CPU (a check where there is no GPU).

Prints per rank: steps, the final loss and a checksum of the weights
(the same with and without a profiler: seeded, deterministic algorithms).
NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the shared machines
require.
"""
import argparse
import os
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402


class PointEnv:
    """A point in the plane pushed by one of four actions; reward: minus its
    distance to the origin."""

    MOVES = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float32) * 0.1

    def __init__(self, seed, delay_s=0.0):
        self.rng = np.random.default_rng(seed)
        self.delay_s = delay_s
        self.position = np.zeros(2, dtype=np.float32)

    def reset(self):
        self.position = self.rng.uniform(-1, 1, size=2).astype(np.float32)
        return self.position.copy()

    def step(self, action):
        if self.delay_s:
            time.sleep(self.delay_s)
        self.position = np.clip(self.position + self.MOVES[action], -2, 2)
        distance = float(np.linalg.norm(self.position))
        return self.position.copy(), -distance, distance < 0.05


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(2, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4))

    def forward(self, x):
        return self.layers(x)


class GpuReplayBuffer:
    def __init__(self, capacity, device):
        self.states = torch.zeros(capacity, 2, device=device)
        self.actions = torch.zeros(capacity, dtype=torch.long, device=device)
        self.rewards = torch.zeros(capacity, device=device)
        self.next_states = torch.zeros(capacity, 2, device=device)
        self.size, self.cursor, self.capacity = 0, 0, capacity

    def add(self, state, action, reward, next_state):
        i = self.cursor
        self.states[i] = torch.from_numpy(state)
        self.actions[i] = action
        self.rewards[i] = reward
        self.next_states[i] = torch.from_numpy(next_state)
        self.cursor = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch, generator):
        index = torch.randint(0, self.size, (batch,), device=self.states.device, generator=generator)
        return self.states[index], self.actions[index], self.rewards[index], self.next_states[index]


class DataParallelLearner:
    def __init__(self, device, rank):
        torch.manual_seed(0)  # The same initial weights on every rank.
        ids = [device.index] if device.type == "cuda" else None
        self.q = DistributedDataParallel(QNetwork().to(device), device_ids=ids)
        self.target = QNetwork().to(device)
        self.target.load_state_dict(self.q.module.state_dict())
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=1e-3)
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(1000 + rank)
        self.device = device

    def select_action(self, state, epsilon, rng):
        if rng.random() < epsilon:
            return int(rng.integers(4))
        with torch.no_grad():
            return int(self.q.module(torch.from_numpy(state).to(self.device)).argmax())

    def update(self, buffer, batch=256, gamma=0.99):
        states, actions, rewards, next_states = buffer.sample(batch, self.generator)
        with torch.no_grad():
            target = rewards + gamma * self.target(next_states).max(dim=1).values
        q = self.q(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()  # DDP all-reduces the gradients here.
        self.optimizer.step()
        return float(loss)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--slow-ms", type=float, default=0.0)
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo" if args.cpu else "nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if args.cpu:
        torch.set_num_threads(1)
        device = torch.device("cpu")
    else:
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(rank)
    env = PointEnv(seed=rank, delay_s=args.slow_ms / 1e3 if rank == args.slow_rank else 0.0)
    learner = DataParallelLearner(device, rank)
    buffer = GpuReplayBuffer(10_000, device)
    state = env.reset()
    loss = 0.0
    for step in range(args.steps):
        epsilon = max(0.05, 1.0 - step / (0.5 * args.steps))
        action = learner.select_action(state, epsilon, rng)
        next_state, reward, done = env.step(action)
        buffer.add(state, action, reward, next_state)
        state = env.reset() if done else next_state
        if buffer.size >= 256:
            loss = learner.update(buffer)
        if step % 100 == 99:
            learner.target.load_state_dict(learner.q.module.state_dict())
    if not args.cpu:
        torch.cuda.synchronize()
    checksum = sum(float(p.double().sum()) for p in learner.q.parameters())
    print(f"rank {rank}/{world}: steps={args.steps} loss={loss:.6f} checksum={checksum:.6f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
