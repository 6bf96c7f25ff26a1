"""One rank of a small data-parallel training over torch.distributed's gloo
backend, written as users write one: an env of its own, a policy net, the
gradients averaged with all_reduce. Rank 1's env steps take about a
hundred times as long (a slow simulator, ~13 ms a step more on the 2-core
build machine: more than a busy machine's preemptions move the others), so
it is the straggler in simulation and the others wait for it in all_reduce.

  ranks_worker.py STEPS               (rank from RANK/WORLD_SIZE, as torchrun sets them)
  ranks_worker.py STEPS --spawn N     (N ranks through torch.multiprocessing.spawn)

Prints each rank's steps, its final loss and its pid, then when it reached
each step's all_reduce (CLOCK_MONOTONIC ns, comparable across the ranks):
the test's ground truth of who arrived last."""
import os
import sys
import time

import torch
import torch.distributed as dist


class SlowCartEnv:
    def __init__(self, rank):
        self.rank = rank
        self.state = torch.zeros(16)

    def step(self, action):
        rounds = 2000 if self.rank == 1 else 20
        for _ in range(rounds):
            self.state = torch.tanh(self.state * 0.5 + action)
        return self.state.clone()


def train(rank, world, steps):
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    env, net = SlowCartEnv(rank), torch.nn.Linear(16, 16)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    obs = torch.zeros(16)
    arrivals = []
    for _ in range(steps):
        obs = env.step(float(obs.mean()))
        loss = net(obs).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        arrivals.append(time.monotonic_ns())
        for parameter in net.parameters():
            dist.all_reduce(parameter.grad)
            parameter.grad /= world
        optimizer.step()
    dist.destroy_process_group()
    print("rank %d: %d steps, loss %.6f, pid %d" % (rank, steps, float(loss), os.getpid()), flush=True)
    print("rank %d arrivals: %s" % (rank, " ".join(map(str, arrivals))), flush=True)


def main():
    steps = int(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "--spawn":
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        import torch.multiprocessing as mp
        mp.spawn(train, args=(int(sys.argv[3]), steps), nprocs=int(sys.argv[3]))
        return
    train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), steps)


if __name__ == "__main__":
    main()
