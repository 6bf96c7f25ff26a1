"""Shared helpers for the PyTorch workloads (dqn.py, ppo.py)."""

import argparse
import os
import sys


def parse_args(prog, default_steps, description):
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--steps", type=int, default=default_steps,
                   help=f"environment steps to train for (default "
                        f"{default_steps})")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true",
                   help="print only the final line")
    args = p.parse_args()
    if args.steps < 1:
        p.error("--steps must be positive")
    return args


def setup_torch(prog, device_name, seed):
    """Seed torch, pin it to one thread, make it deterministic; return the
    torch.device. Exits with status 2 if CUDA is requested but unavailable."""
    # cuBLAS needs this before its first handle is created to be
    # deterministic (torch.use_deterministic_algorithms checks for it).
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    if device_name == "cuda" and not torch.cuda.is_available():
        print(f"{prog}: --device cuda requested but this torch "
              f"({torch.__version__}) has no usable CUDA device",
              file=sys.stderr)
        sys.exit(2)
    # One intra-op thread: bit-reproducible CPU reductions, and no thread
    # pool fighting the environment for the machine's two cores.
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    # warn_only: a CUDA op without a deterministic kernel should not abort a
    # profiling run; on CPU every op used here is deterministic anyway.
    torch.use_deterministic_algorithms(True, warn_only=True)
    if device_name == "cuda":
        torch.backends.cudnn.benchmark = False
    return torch.device(device_name)


def run_main(prog, main):
    """Run main(); a MuJoCo loading/layout problem becomes one line on
    stderr and exit status 1 instead of a traceback."""
    from mujoco_ctypes import MuJoCoError
    try:
        return main()
    except MuJoCoError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
