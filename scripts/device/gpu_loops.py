#!/usr/bin/env python3
"""Small GPU loops whose own timers isolate what a GPU-level profiler adds
per step, start-up aside (scripts/device/probe_cupti_cost.sh):

  gpu_loops.py torch_sync    N steps of a small matmul + .item() (a launch or
                             two and a device-to-host copy each)
  gpu_loops.py jax_sync      the same with a jitted function and float()
  gpu_loops.py jax_compile   N distinct jitted functions, each compiled,
                             loaded and run once (N/100 of them)
  gpu_loops.py torch_hot     N steps of 8 tiny in-place launches, nothing
                             between the steps (the launch path stays in
                             the caches, as in a calibration loop)
  gpu_loops.py torch_cold    the same with a walk over 16 MB of host memory
                             between the steps (as a training step's Python
                             and simulation evict the launch path); set
                             the two apart by the CUDA calls' measured time,
                             not by the loop's
  gpu_loops.py torch_queued  N steps of 8 in-place adds over 64 MB each
                             (about 40 us of GPU time on an H100, twice a
                             profiled launch's CPU time), a synchronize
                             every 100 steps: the
                             GPU bounds the loop, the CPU waits, so a
                             profiler's CPU-side cost is hidden and its
                             GPU-side cost shows in the loop's time

Prints "MODE <ms> ms <us> us/step" for the timed part."""
import sys
import time


def torch_sync(n):
    import torch
    x = torch.randn(64, 64, device="cuda")
    for _ in range(20):
        (x @ x).sum().item()
    begin = time.perf_counter()
    for _ in range(n):
        (x @ x).sum().item()
    return time.perf_counter() - begin, n


def jax_sync(n):
    import jax
    import jax.numpy as jnp
    f = jax.jit(lambda x: (x @ x).sum())
    x = jnp.ones((64, 64))
    for _ in range(20):
        float(f(x))
    begin = time.perf_counter()
    for _ in range(n):
        float(f(x))
    return time.perf_counter() - begin, n


def jax_compile(n):
    import jax
    import jax.numpy as jnp
    x = jnp.ones((32, 32))
    float(jax.jit(lambda x: x.sum())(x))
    count = max(1, n // 100)
    begin = time.perf_counter()
    for i in range(count):
        scale = float(i + 1)
        float(jax.jit(lambda x, s=scale: (jnp.tanh(x * s) @ x).sum())(x))
    return time.perf_counter() - begin, count


def torch_launches(n, evict_bytes, elements=256):
    import numpy
    import torch
    x = torch.zeros(elements, device="cuda")
    walk = numpy.ones(evict_bytes // 8) if evict_bytes else None
    for _ in range(20):
        x.add_(1.0)
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for i in range(n):
        for _ in range(8):
            x.add_(1.0)
        if walk is not None:
            walk.sum()
        if i % 100 == 99:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return time.perf_counter() - begin, n


def main():
    mode = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    modes = {"torch_sync": torch_sync, "jax_sync": jax_sync, "jax_compile": jax_compile,
             "torch_hot": lambda n: torch_launches(n, 0), "torch_cold": lambda n: torch_launches(n, 16 << 20),
             "torch_queued": lambda n: torch_launches(n, 0, 16 << 20)}
    seconds, steps = modes[mode](n)
    print(f"{mode} {seconds * 1e3:.1f} ms {seconds * 1e6 / steps:.1f} us/step")


if __name__ == "__main__":
    main()
