#!/usr/bin/python3
"""DQN (off-policy) on the MuJoCo cart-pole, in PyTorch.

    /usr/bin/python3 dqn.py --steps 5000 [--device cpu|cuda] [--seed 0]

Double DQN with a target network, Huber loss, Adam, epsilon-greedy
exploration annealed over the first 25% of the budget, one gradient step per
environment step once the replay buffer holds `learning_starts` transitions.

Last line printed (and the only one with --quiet):

    dqn: steps=N wall_s=W final_return=R

R is the mean return of a greedy evaluation after training: training.EVAL_EPISODES (5)
episodes on a separate CartPoleEnv reset with seeds 10000+seed+i, the policy
taking argmax Q. It is deterministic for a given seed on CPU (torch seeded,
one thread, deterministic algorithms; numpy Generators seeded from --seed;
MuJoCo deterministic). W is the wall time of the whole run (training plus
evaluation), not deterministic. Evaluation steps are not counted in N.

The names QNetwork.forward, DQNAgent.select_action, ReplayBuffer.add/sample,
DQNAgent.update and env.reset/env.step are what rlscope keys operations on;
keep them.
"""

import os
import sys
import time

# Before numpy/torch load their BLAS: torch.set_num_threads() does not reach
# the BLAS library's own thread pool (Debian's torch calls the system
# OpenBLAS), and a multi-threaded BLAS makes results depend on the core count
# -- and here ran 3x slower for these tiny matrices.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from cartpole_env import CartPoleEnv  # noqa: E402
from common import parse_args, run_main, setup_torch  # noqa: E402
from training import EpsilonGreedy, NumpyReplayBuffer, train_off_policy  # noqa: E402

PROG = "dqn"


class QNetwork(nn.Module):
    def __init__(self, obs_size, num_actions, hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(obs_size, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, num_actions)

    def forward(self, obs):
        x = F.relu(self.fc1(obs))
        x = F.relu(self.fc2(x))
        return self.out(x)


class ReplayBuffer(NumpyReplayBuffer):
    """The transitions in numpy on the CPU; sample() moves one batch to the
    training device."""

    def __init__(self, capacity, obs_size, device, rng):
        super().__init__(capacity, obs_size, rng, np.int64)
        self.device = device

    def sample(self, batch_size):
        return tuple(torch.as_tensor(a, device=self.device) for a in self.sample_arrays(batch_size))


class DQNAgent(EpsilonGreedy):
    def __init__(self, obs_size, num_actions, device, rng, total_steps,
                 lr=5e-4, gamma=0.99, batch_size=64, buffer_size=50_000,
                 target_update_every=500, eps_start=1.0, eps_end=0.05,
                 eps_fraction=0.25):
        self.device, self.rng = device, rng
        self.num_actions, self.gamma, self.batch_size = (num_actions, gamma,
                                                         batch_size)
        self.q = QNetwork(obs_size, num_actions).to(device)
        self.q_target = QNetwork(obs_size, num_actions).to(device)
        self.q_target.load_state_dict(self.q.state_dict())
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.buffer = ReplayBuffer(min(buffer_size, total_steps), obs_size,
                                   device, rng)
        self.target_update_every = target_update_every
        self.init_exploration(num_actions, rng, total_steps, eps_start, eps_end, eps_fraction)
        self.updates = 0

    def select_action(self, obs, epsilon=0.0):
        random_action = self.explore(epsilon)
        if random_action is not None:
            return random_action
        with torch.no_grad():
            x = torch.as_tensor(obs, device=self.device).unsqueeze(0)
            return int(self.q(x).argmax(dim=1).item())

    def update(self):
        obs, actions, rewards, next_obs, terminated = self.buffer.sample(
            self.batch_size)
        with torch.no_grad():
            # Double DQN: the online net picks the next action, the target
            # net values it; curbs Q over-estimation on this small task.
            next_a = self.q(next_obs).argmax(dim=1, keepdim=True)
            next_q = self.q_target(next_obs).gather(1, next_a).squeeze(1)
            target = rewards + self.gamma * (1.0 - terminated) * next_q
        q = self.q(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q, target)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.q.parameters(), 10.0)
        self.optimizer.step()
        self.updates += 1
        if self.updates % self.target_update_every == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        return loss


def main():
    args = parse_args(PROG, 5000, "DQN on the MuJoCo cart-pole")
    t0 = time.perf_counter()
    device = setup_torch(PROG, args.device, args.seed)
    rng = np.random.default_rng(args.seed)
    env = CartPoleEnv(seed=args.seed)
    agent = DQNAgent(env.observation_size, env.num_actions, device, rng,
                     total_steps=args.steps)
    return train_off_policy(PROG, args, env, agent, t0)


if __name__ == "__main__":
    sys.exit(run_main(PROG, main))
