#!/usr/bin/python3
"""PPO (on-policy) on the MuJoCo cart-pole, in PyTorch.

    /usr/bin/python3 ppo.py --steps 20000 [--device cpu|cuda] [--seed 0]

Clipped-objective PPO with separate actor and critic MLPs, GAE(lambda),
one environment, rollouts of ROLLOUT_LEN (512) steps, each followed by
update(): EPOCHS passes over the rollout in shuffled minibatches. A run whose
budget is not a multiple of the rollout length updates on the final partial
rollout too, so even `--steps 300` exercises update().

Last line printed (and the only one with --quiet):

    ppo: steps=N wall_s=W final_return=R

R is the mean return of a greedy evaluation after training: training.EVAL_EPISODES (5)
episodes on a separate CartPoleEnv reset with seeds 10000+seed+i, the policy
taking the most probable action. It is deterministic for a given seed on CPU
(torch seeded -- it also drives action sampling and minibatch shuffling --,
one thread, deterministic algorithms; MuJoCo deterministic). W is the wall
time of the whole run, not deterministic. Evaluation steps are not counted
in N.

The names ActorCritic.forward, PPOAgent.act, RolloutBuffer.add,
PPOAgent.update and env.reset/env.step are what rlscope keys operations on;
keep them.
"""

import os
import sys
import time

# Before numpy/torch load their BLAS: see the same block in dqn.py.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.distributions import Categorical  # noqa: E402

from cartpole_env import CartPoleEnv  # noqa: E402
from common import parse_args, run_main, setup_torch  # noqa: E402
from training import evaluate, print_final_line  # noqa: E402

PROG = "ppo"
ROLLOUT_LEN = 512


def mlp(inp, out, hidden=64, out_gain=1.0):
    layers = [nn.Linear(inp, hidden), nn.Tanh(),
              nn.Linear(hidden, hidden), nn.Tanh(),
              nn.Linear(hidden, out)]
    # Orthogonal init with a small output gain for the policy head starts
    # PPO near a uniform policy; the usual trick, it speeds up early learning.
    for layer in layers:
        if isinstance(layer, nn.Linear):
            nn.init.orthogonal_(layer.weight, np.sqrt(2))
            nn.init.zeros_(layer.bias)
    nn.init.orthogonal_(layers[-1].weight, out_gain)
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self, obs_size, num_actions):
        super().__init__()
        self.actor = mlp(obs_size, num_actions, out_gain=0.01)
        self.critic = mlp(obs_size, 1, out_gain=1.0)

    def forward(self, obs):
        """Action logits and state values for a batch of observations."""
        return self.actor(obs), self.critic(obs).squeeze(-1)


class RolloutBuffer:
    """One rollout of a single environment, kept in numpy on the CPU until
    update() moves it to the device in one go."""

    def __init__(self, capacity, obs_size):
        self.capacity = capacity
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.actions = np.zeros(capacity, np.int64)
        self.logprobs = np.zeros(capacity, np.float32)
        self.rewards = np.zeros(capacity, np.float32)
        self.values = np.zeros(capacity, np.float32)
        # 1.0 where the episode ended after this step (terminated or
        # truncated): GAE must not run across that boundary.
        self.dones = np.zeros(capacity, np.float32)
        self.size = 0

    def add(self, obs, action, logprob, reward, value, done):
        i = self.size
        self.obs[i], self.actions[i], self.logprobs[i] = obs, action, logprob
        self.rewards[i], self.values[i], self.dones[i] = reward, value, done
        self.size += 1

    def full(self):
        return self.size == self.capacity

    def advantages_and_returns(self, last_value, gamma, lam):
        n = self.size
        adv = np.zeros(n, np.float32)
        gae = 0.0
        for t in reversed(range(n)):
            next_value = last_value if t == n - 1 else self.values[t + 1]
            nonterminal = 1.0 - self.dones[t]
            delta = (self.rewards[t] + gamma * next_value * nonterminal
                     - self.values[t])
            gae = delta + gamma * lam * nonterminal * gae
            adv[t] = gae
        return adv, adv + self.values[:n]

    def clear(self):
        self.size = 0


class PPOAgent:
    def __init__(self, obs_size, num_actions, device, rollout_len,
                 lr=1e-3, gamma=0.99, lam=0.95, clip=0.2, epochs=10,
                 minibatch=64, value_coef=0.5, ent_coef=0.0, max_grad=0.5):
        self.device = device
        self.gamma, self.lam, self.clip = gamma, lam, clip
        self.epochs, self.minibatch = epochs, minibatch
        self.value_coef, self.ent_coef, self.max_grad = (value_coef, ent_coef,
                                                         max_grad)
        self.net = ActorCritic(obs_size, num_actions).to(device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr,
                                          eps=1e-5)
        self.buffer = RolloutBuffer(rollout_len, obs_size)

    def act(self, obs, greedy=False):
        """Returns (action, log-probability, value estimate) for one obs."""
        with torch.no_grad():
            x = torch.as_tensor(obs, device=self.device).unsqueeze(0)
            logits, value = self.net(x)
            dist = Categorical(logits=logits)
            action = logits.argmax(dim=1) if greedy else dist.sample()
            logprob = dist.log_prob(action)
        return int(action.item()), float(logprob.item()), float(value.item())

    def value(self, obs):
        with torch.no_grad():
            x = torch.as_tensor(obs, device=self.device).unsqueeze(0)
            return float(self.net(x)[1].item())

    def update(self, last_value):
        buf = self.buffer
        adv, ret = buf.advantages_and_returns(last_value, self.gamma, self.lam)
        n = buf.size
        to = lambda a: torch.as_tensor(a, device=self.device)
        obs, actions = to(buf.obs[:n]), to(buf.actions[:n])
        old_logprobs, adv, ret = to(buf.logprobs[:n]), to(adv), to(ret)
        mb = min(self.minibatch, n)
        for _ in range(self.epochs):
            perm = torch.randperm(n, device="cpu").to(self.device)
            for start in range(0, n - mb + 1, mb):
                idx = perm[start:start + mb]
                logits, values = self.net(obs[idx])
                dist = Categorical(logits=logits)
                logprob = dist.log_prob(actions[idx])
                ratio = torch.exp(logprob - old_logprobs[idx])
                a = adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                policy_loss = -torch.min(
                    ratio * a,
                    torch.clamp(ratio, 1 - self.clip, 1 + self.clip) * a).mean()
                value_loss = (values - ret[idx]).pow(2).mean()
                loss = (policy_loss + self.value_coef * value_loss
                        - self.ent_coef * dist.entropy().mean())
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad)
                self.optimizer.step()
        buf.clear()


def main():
    args = parse_args(PROG, 20000, "PPO on the MuJoCo cart-pole")
    t0 = time.perf_counter()
    device = setup_torch(PROG, args.device, args.seed)
    env = CartPoleEnv(seed=args.seed)
    agent = PPOAgent(env.observation_size, env.num_actions, device,
                     rollout_len=min(ROLLOUT_LEN, args.steps))
    log_every = max(1, args.steps // 5)

    obs, _ = env.reset(seed=args.seed)
    ep_ret, returns = 0.0, []
    for step in range(args.steps):
        action, logprob, value = agent.act(obs)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        if truncated:
            # A time limit is not a failure: fold the value of the state we
            # were cut off in into the reward, then treat it as an end.
            reward += agent.gamma * agent.value(next_obs)
        agent.buffer.add(obs, action, logprob, reward, value,
                         terminated or truncated)
        ep_ret += 1.0
        obs = next_obs
        if terminated or truncated:
            returns.append(ep_ret)
            obs, _ = env.reset()
            ep_ret = 0.0
        if agent.buffer.full() or step == args.steps - 1:
            # After a reset obs is a fresh episode's start; its value is
            # ignored then anyway because the last stored step has done=1.
            agent.update(agent.value(obs))
        if not args.quiet and (step + 1) % log_every == 0:
            recent = np.mean(returns[-10:]) if returns else float("nan")
            print(f"{PROG}: step {step + 1}/{args.steps} episodes "
                  f"{len(returns)} mean_return(last 10) {recent:.1f}",
                  flush=True)
    env.close()

    final_return = evaluate(lambda obs: agent.act(obs, greedy=True)[0], args.seed)
    print_final_line(PROG, args.steps, time.perf_counter() - t0, final_return)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(PROG, main))
