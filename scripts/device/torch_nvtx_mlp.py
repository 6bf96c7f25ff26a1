"""A DQN-like training loop (batch 32, 8-64-64-4 MLP, Adam) whose phases are
NVTX ranges: the GPU-machine check that rlscope sees torch's CUDA runtime
calls and NVTX operations. Prints its own wall time.

    python3 torch_nvtx_mlp.py [--steps N] [--device cuda|cpu]
                              [--window profiler|nvtx FIRST COUNT]

--window marks steps FIRST to FIRST+COUNT-1 for a capture window, as a
user marks them for Nsight Systems: torch.cuda.profiler.start()/stop()
(cudaProfilerStart/Stop) or an NVTX range named "captured".
"""
import argparse
import time

import numpy as np
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--window", nargs=3, metavar=("KIND", "FIRST", "COUNT"), default=None)
    args = parser.parse_args()
    kind, first, count = (args.window[0], int(args.window[1]), int(args.window[2])) if args.window else ("", -1, 0)
    if kind not in ("", "profiler", "nvtx"):
        parser.error("--window wants profiler or nvtx")
    torch.manual_seed(0)
    device = torch.device(args.device)
    net = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    nvtx = torch.cuda.nvtx
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for step in range(args.steps):
        if step == first:
            torch.cuda.profiler.start() if kind == "profiler" else nvtx.range_push("captured")
        nvtx.range_push("simulation")
        obs = rng.standard_normal((32, 8)).astype(np.float32)
        for _ in range(20):  # Stand-in for a simulator step on the CPU.
            obs = np.tanh(obs * 1.01)
        nvtx.range_pop()
        nvtx.range_push("inference")
        with torch.no_grad():
            batch = torch.from_numpy(obs).to(device)
            action = net(batch).argmax(dim=1).cpu()
        nvtx.range_pop()
        nvtx.range_push("backprop")
        target = torch.randn(32, 4, device=device)
        loss = torch.nn.functional.mse_loss(net(batch), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        nvtx.range_pop()
        if step == first + count - 1:
            torch.cuda.profiler.stop() if kind == "profiler" else nvtx.range_pop()
    if device.type == "cuda":
        torch.cuda.synchronize()
    print(f"torch_nvtx_mlp: {args.steps} steps in {time.perf_counter() - start:.3f} s, last action {int(action[0])}")


if __name__ == "__main__":
    main()
