"""A stand-in for torchrun (Debian's torch 1.13 torchrun fails on this
Python): starts WORLD copies of a command with the variables torchrun
sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and waits
for them all.

  ranks_launcher.py WORLD PORT COMMAND..."""
import os
import subprocess
import sys


def main():
    world, port, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    workers = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        workers.append(subprocess.Popen(command, env=env))
    sys.exit(max(worker.wait() for worker in workers))


if __name__ == "__main__":
    main()
