#!/usr/bin/python3
"""A small multi-thread, multi-process workload for rlscope's tests.

    /usr/bin/python3 threaded_rollout.py [--steps N]

The main process runs two Python threads, each stepping its own CartPoleEnv
(its own mjModel/mjData) for N environment steps (default 2000):
  * thread "rollout-torch" picks actions with a tiny torch policy
    (Linear(4, 2), argmax under torch.no_grad()) -- or randomly if torch is
    not importable in this Python;
  * thread "rollout-random" picks actions uniformly at random.
ctypes releases the GIL around each mj_step, so the two threads' simulator
calls can really overlap. Meanwhile the main thread starts one child process,
`subprocess.run([sys.executable, __file__, '--child'])` (fork + exec), which
steps a CartPoleEnv for CHILD_STEPS steps and prints
`threaded_rollout: child ok steps=...`. The parent then prints, last,

    threaded_rollout: ok

and exits 0 (1 if a thread or the child failed). Under 1 s on a 2-core
x86-64 machine with Debian's torch; most of it is importing torch.
"""

import argparse
import os
import subprocess
import sys
import threading

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

from cartpole_env import CartPoleEnv  # noqa: E402

CHILD_STEPS = 200


def run_env(env, steps, policy, seed):
    """Step env for `steps` steps, resetting at episode ends; returns the
    number of episodes finished."""
    obs, _ = env.reset(seed=seed)
    episodes = 0
    for _ in range(steps):
        obs, _, term, trunc, _ = env.step(policy(obs))
        if term or trunc:
            episodes += 1
            obs, _ = env.reset()
    return episodes


def random_policy(seed):
    rng = np.random.default_rng(seed)
    return lambda obs: int(rng.integers(2))


def torch_policy(seed):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    net = torch.nn.Linear(CartPoleEnv.observation_size,
                          CartPoleEnv.num_actions)

    def policy(obs):
        with torch.no_grad():
            return int(net(torch.as_tensor(obs).unsqueeze(0)).argmax().item())
    return policy


def child():
    env = CartPoleEnv(seed=123)
    run_env(env, CHILD_STEPS, random_policy(123), seed=123)
    env.close()
    print(f"threaded_rollout: child ok steps={CHILD_STEPS}", flush=True)
    return 0


def parent(steps):
    # Models are loaded here, in the main thread, before the threads start;
    # only stepping happens concurrently.
    policies = {"rollout-torch": torch_policy(1) or random_policy(1),
                "rollout-random": random_policy(2)}
    envs = {name: CartPoleEnv(seed=i) for i, name in enumerate(policies)}
    results, errors = {}, []

    def worker(name, seed):
        try:
            results[name] = run_env(envs[name], steps, policies[name], seed)
        except Exception as e:  # reported below; a thread cannot exit(1)
            errors.append(f"{name}: {e!r}")

    threads = [threading.Thread(target=worker, name=name, args=(name, i))
               for i, name in enumerate(policies)]
    for t in threads:
        t.start()
    sys.stdout.flush()  # keep our lines ordered before the child's
    proc = subprocess.run([sys.executable, os.path.abspath(__file__),
                           "--child"])
    for t in threads:
        t.join()
    for env in envs.values():
        env.close()

    if proc.returncode != 0:
        errors.append(f"child exited with status {proc.returncode}")
    for name in policies:
        if name in results:
            print(f"threaded_rollout: {name} steps={steps} "
                  f"episodes={results[name]}")
    if errors:
        print("threaded_rollout: FAILED: " + "; ".join(errors),
              file=sys.stderr)
        return 1
    print("threaded_rollout: ok", flush=True)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=2000,
                   help="environment steps per thread (default 2000)")
    args = p.parse_args()
    return child() if args.child else parent(args.steps)


if __name__ == "__main__":
    sys.exit(main())
