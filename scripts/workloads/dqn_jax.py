#!/usr/bin/python3
"""DQN (off-policy) on the MuJoCo cart-pole, in JAX -- the twin of dqn.py.

    python3 dqn_jax.py --steps 5000 [--device cpu|cuda] [--seed 0]

Same algorithm and hyperparameters as dqn.py (Double DQN, target network,
Huber loss, gradient clipping at global norm 10, Adam, epsilon-greedy), with
the optimizer written out by hand so that only jax itself is needed (no
optax, no flax). Same CLI, and the same last line:

    dqn_jax: steps=N wall_s=W final_return=R

R is the mean return of a greedy evaluation after training (5 episodes,
env seeds 10000+seed+i), as in dqn.py. On CPU a run is deterministic for a
given seed (jax.random key from --seed, numpy Generator from --seed, MuJoCo
deterministic); the numbers differ from dqn.py's (different initialisation
and kernels). W includes jit compilation.

If jax cannot be imported, prints one line to stderr and exits 0, so test
suites can run it unconditionally. --device cuda without a GPU backend in
jax exits 2.

Names kept for rlscope: QNetwork.apply (the forward function),
DQNAgent.select_action, ReplayBuffer.add/sample, DQNAgent.update,
env.reset/env.step.
"""

import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

from cartpole_env import CartPoleEnv  # noqa: E402
from common import parse_args, run_main  # noqa: E402
from training import EpsilonGreedy, NumpyReplayBuffer, train_off_policy  # noqa: E402

PROG = "dqn_jax"

# Imported in main() (after argument parsing, so --help works without jax).
jax = jnp = None


def _import_jax():
    global jax, jnp
    try:
        import jax as _jax
        import jax.numpy as _jnp
    except ImportError:
        print(f"{PROG}: jax is not installed in this Python; skipping",
              file=sys.stderr)
        sys.exit(0)
    jax, jnp = _jax, _jnp


def _pick_device(name):
    platform = "gpu" if name == "cuda" else "cpu"
    try:
        devices = jax.devices(platform)
    except RuntimeError:
        devices = []
    if not devices:
        print(f"{PROG}: --device {name} requested but jax "
              f"{jax.__version__} has no {platform} backend", file=sys.stderr)
        sys.exit(2)
    return devices[0]


def _tree_map(fn, *trees):
    return jax.tree_util.tree_map(fn, *trees)


class QNetwork:
    """An MLP Q-function as pure functions over a params pytree: a list of
    {"w", "b"} dicts, one per layer."""

    def __init__(self, obs_size, num_actions, hidden=128):
        self.sizes = [obs_size, hidden, hidden, num_actions]

    def init(self, key):
        # PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        params = []
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            key, kw, kb = jax.random.split(key, 3)
            bound = 1.0 / np.sqrt(fan_in)
            params.append({
                "w": jax.random.uniform(kw, (fan_in, fan_out), jnp.float32,
                                        -bound, bound),
                "b": jax.random.uniform(kb, (fan_out,), jnp.float32,
                                        -bound, bound),
            })
        return params

    @staticmethod
    def apply(params, obs):
        x = obs
        for layer in params[:-1]:
            x = jax.nn.relu(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]


class ReplayBuffer(NumpyReplayBuffer):
    """The transitions in numpy on the CPU; sample() moves one batch to the
    jax device."""

    def __init__(self, capacity, obs_size, device, rng):
        super().__init__(capacity, obs_size, rng, np.int32)
        self.device = device

    def sample(self, batch_size):
        return jax.device_put(self.sample_arrays(batch_size), self.device)


def _huber(x):
    ax = jnp.abs(x)
    return jnp.where(ax < 1.0, 0.5 * x * x, ax - 0.5)


def _make_train_step(gamma, lr, max_grad_norm, b1=0.9, b2=0.999, eps=1e-8):
    """Builds the jitted (params, target, opt_state, batch) -> new state."""

    def loss_fn(params, target_params, batch):
        obs, actions, rewards, next_obs, terminated = batch
        # Double DQN target, as in dqn.py; no gradient flows into it.
        next_a = jnp.argmax(QNetwork.apply(params, next_obs), axis=1)
        next_q = jnp.take_along_axis(QNetwork.apply(target_params, next_obs),
                                     next_a[:, None], axis=1)[:, 0]
        target = jax.lax.stop_gradient(
            rewards + gamma * (1.0 - terminated) * next_q)
        q = jnp.take_along_axis(QNetwork.apply(params, obs),
                                actions[:, None], axis=1)[:, 0]
        return jnp.mean(_huber(q - target))

    def train_step(params, target_params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, target_params,
                                                  batch)
        # Clip by global norm (torch.nn.utils.clip_grad_norm_ semantics).
        leaves = jax.tree_util.tree_leaves(grads)
        norm = jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
        scale = jnp.minimum(1.0, max_grad_norm / (norm + 1e-6))
        grads = _tree_map(lambda g: g * scale, grads)
        # Adam, bias-corrected as in torch.optim.Adam.
        m, v, t = opt_state
        t = t + 1
        m = _tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = _tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
        tf = t.astype(jnp.float32)
        c1, c2 = 1 - b1 ** tf, 1 - b2 ** tf
        params = _tree_map(
            lambda p, m_, v_: p - lr * (m_ / c1) / (jnp.sqrt(v_ / c2) + eps),
            params, m, v)
        return params, (m, v, t), loss

    return jax.jit(train_step)


class DQNAgent(EpsilonGreedy):
    def __init__(self, obs_size, num_actions, device, rng, key, total_steps,
                 lr=5e-4, gamma=0.99, batch_size=64, buffer_size=50_000,
                 target_update_every=500, eps_start=1.0, eps_end=0.05,
                 eps_fraction=0.25):
        self.device, self.rng = device, rng
        self.num_actions, self.batch_size = num_actions, batch_size
        net = QNetwork(obs_size, num_actions)
        self.params = jax.device_put(net.init(key), device)
        self.target_params = self.params  # arrays are immutable: no copy
        zeros = _tree_map(jnp.zeros_like, self.params)
        self.opt_state = jax.device_put(
            (zeros, zeros, jnp.zeros((), jnp.int32)), device)
        self._train_step = _make_train_step(gamma, lr, 10.0)
        self._greedy = jax.jit(
            lambda params, obs: jnp.argmax(QNetwork.apply(params, obs[None]),
                                           axis=1)[0])
        self.buffer = ReplayBuffer(min(buffer_size, total_steps), obs_size,
                                   device, rng)
        self.target_update_every = target_update_every
        self.init_exploration(num_actions, rng, total_steps, eps_start, eps_end, eps_fraction)
        self.updates = 0

    def select_action(self, obs, epsilon=0.0):
        random_action = self.explore(epsilon)
        if random_action is not None:
            return random_action
        x = jax.device_put(np.asarray(obs, np.float32), self.device)
        return int(self._greedy(self.params, x))

    def update(self):
        batch = self.buffer.sample(self.batch_size)
        self.params, self.opt_state, loss = self._train_step(
            self.params, self.target_params, self.opt_state, batch)
        self.updates += 1
        if self.updates % self.target_update_every == 0:
            self.target_params = self.params
        return loss


def main():
    args = parse_args(PROG, 5000, "DQN on the MuJoCo cart-pole, in JAX")
    t0 = time.perf_counter()
    _import_jax()
    device = _pick_device(args.device)
    # Arrays made without an explicit device (parameter init, optimizer
    # state) land on the chosen one too, not on jax's default GPU.
    with jax.default_device(device):
        return _train(args, device, t0)


def _train(args, device, t0):
    rng = np.random.default_rng(args.seed)
    # jax.random.key (typed keys) where available, the legacy PRNGKey else.
    key = getattr(jax.random, "key", jax.random.PRNGKey)(args.seed)
    env = CartPoleEnv(seed=args.seed)
    agent = DQNAgent(env.observation_size, env.num_actions, device, rng, key,
                     total_steps=args.steps)
    return train_off_policy(PROG, args, env, agent, t0)


if __name__ == "__main__":
    sys.exit(run_main(PROG, main))
