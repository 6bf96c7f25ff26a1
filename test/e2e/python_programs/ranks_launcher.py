"""A stand-in for torchrun (Debian's torch 1.13 torchrun fails on this
Python): starts WORLD copies of a command with the variables torchrun
sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and waits
for them all. With --node FIRST COUNT it starts ranks FIRST to
FIRST+COUNT-1 only, as torchrun does on one node of several (another
launcher starts the others).

  ranks_launcher.py WORLD PORT [--node FIRST COUNT] COMMAND..."""
import os
import subprocess
import sys


def main():
    world, port, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    first, count = 0, world
    if command[:1] == ["--node"]:
        first, count, command = int(command[1]), int(command[2]), command[3:]
    workers = []
    for rank in range(first, first + count):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank - first),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        workers.append(subprocess.Popen(command, env=env))
    sys.exit(max(worker.wait() for worker in workers))


if __name__ == "__main__":
    main()
