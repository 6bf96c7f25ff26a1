"""One rank of a DistributedDataParallel training over gloo, written as a
flat script the way tutorials write one: the model wrapped in DDP, whose
gradient all-reduce runs from C++ during loss.backward() (no Python call
for it). Rank 1's env steps take far longer (a slow simulator), so the
other rank waits for it in every all-reduce.

  ranks_ddp_worker.py STEPS    (rank from RANK/WORLD_SIZE, as torchrun sets them)

Prints each rank's steps, its final loss and its pid, then when it began
each step's backward pass (CLOCK_MONOTONIC ns, comparable across the
ranks): the test's ground truth of who reached the all-reduce last."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = int(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()

policy = DDP(torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2)))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
state = torch.zeros(8)
backward_starts = []
for step in range(STEPS):
    # The environment: rank 1's physics is a hundred times as costly.
    for _ in range(2000 if rank == 1 else 20):
        state = torch.tanh(state * 0.9 + 0.1)
    batch = state.repeat(32, 1) + 0.01 * torch.randn(32, 8)
    loss = policy(batch).pow(2).mean()
    optimizer.zero_grad()
    backward_starts.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
    loss.backward()
    optimizer.step()

print(f"rank {rank}: {STEPS} steps, loss {loss.item():.6f}, pid {os.getpid()}", flush=True)
print(f"rank {rank} backward starts: {' '.join(map(str, backward_starts))}", flush=True)
dist.destroy_process_group()
