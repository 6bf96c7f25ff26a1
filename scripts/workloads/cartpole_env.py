"""Cart-pole balancing on MuJoCo (cartpole.xml), through mujoco_ctypes.

    env = CartPoleEnv()
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)   # action 0/1

Semantics (the classic control task, with MuJoCo as the simulator):
  * actions: 0 = push the cart left (-10 N), 1 = push right (+10 N);
  * one env step = SUBSTEPS (2) calls of mj_step at 10 ms, i.e. 20 ms;
  * observation (float32): cart position, cart velocity, pole angle (rad,
    0 = upright), pole angular velocity;
  * reward 1.0 for every step taken, including the one that terminates;
  * terminated when |angle| > 12 degrees or |x| > 2.4 m (end of the rail);
  * truncated after MAX_EPISODE_STEPS = 500 steps (as in CartPole-v1), so the
    best possible return is 500; a uniformly random policy gets about 22.

Determinism: reset(seed=s) reseeds the env's numpy Generator with s; a plain
reset() keeps drawing from the current Generator (which the constructor seeds
with `seed`, default 0). The initial state is qpos, qvel ~ U(-0.05, 0.05).
MuJoCo itself is deterministic, so equal seeds and actions give equal
trajectories.
"""

import math
import os

import numpy as np

from mujoco_ctypes import MjData, MjModel

MODEL_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "cartpole.xml")
SUBSTEPS = 2
MAX_EPISODE_STEPS = 500
ANGLE_LIMIT = 12 * math.pi / 180
X_LIMIT = 2.4


class CartPoleEnv:
    observation_size = 4
    num_actions = 2

    def __init__(self, seed=0, max_episode_steps=MAX_EPISODE_STEPS):
        # expect= is the layout self-check: these are what cartpole.xml defines.
        self.model = MjModel(MODEL_PATH,
                             expect={"nq": 2, "nv": 2, "nu": 1,
                                     "timestep": 0.01})
        self.data = MjData(self.model)
        self.max_episode_steps = max_episode_steps
        self._rng = np.random.default_rng(seed)
        self._t = 0
        self._needs_reset = True

    def _obs(self):
        q, v = self.data.qpos, self.data.qvel
        return np.array([q[0], v[0], q[1], v[1]], dtype=np.float32)

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.data.reset()
        self.data.qpos[:] = self._rng.uniform(-0.05, 0.05, size=2)
        self.data.qvel[:] = self._rng.uniform(-0.05, 0.05, size=2)
        self.data.forward()
        self._t = 0
        self._needs_reset = False
        return self._obs(), {}

    def step(self, action):
        if self._needs_reset:
            raise RuntimeError("CartPoleEnv.step() called before reset() or "
                               "after the episode ended")
        a = int(action)
        if a not in (0, 1):
            raise ValueError(f"action must be 0 or 1, got {action!r}")
        self.data.ctrl[0] = 1.0 if a == 1 else -1.0
        self.data.step(SUBSTEPS)
        self._t += 1
        obs = self._obs()
        x, angle = float(obs[0]), float(obs[2])
        terminated = abs(x) > X_LIMIT or abs(angle) > ANGLE_LIMIT
        truncated = (not terminated) and self._t >= self.max_episode_steps
        self._needs_reset = terminated or truncated
        return obs, 1.0, terminated, truncated, {}

    def close(self):
        self.data.close()
        self.model.close()


def _random_baseline(episodes=100, seed=0):
    """Mean return of a uniformly random policy (the learning baseline)."""
    env = CartPoleEnv(seed=seed)
    rng = np.random.default_rng(seed + 1)
    returns = []
    for i in range(episodes):
        env.reset(seed=seed + i)
        done, ret = False, 0.0
        while not done:
            _, r, term, trunc, _ = env.step(int(rng.integers(2)))
            ret += r
            done = term or trunc
        returns.append(ret)
    env.close()
    return float(np.mean(returns))


if __name__ == "__main__":
    import time
    t0 = time.perf_counter()
    print(f"cartpole_env: random policy mean return over 100 episodes = "
          f"{_random_baseline():.1f} ({time.perf_counter() - t0:.2f}s)")
