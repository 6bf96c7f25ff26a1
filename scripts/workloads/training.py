"""What the trainers share: the greedy evaluation behind final_return, the
final line, and the off-policy (DQN) training loop and exploration used by
both the torch and the JAX agent. Plain numpy: no torch or jax import here."""

import time

import numpy as np

from cartpole_env import CartPoleEnv

EVAL_EPISODES = 5


class NumpyReplayBuffer:
    """Fixed-size ring buffer of transitions in numpy on the CPU. Trainers
    subclass it with a sample() that moves a batch to their device
    (sample_arrays gives the batch as numpy arrays)."""

    def __init__(self, capacity, obs_size, rng, action_dtype):
        self.capacity, self.rng = capacity, rng
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.next_obs = np.zeros((capacity, obs_size), np.float32)
        self.actions = np.zeros(capacity, action_dtype)
        self.rewards = np.zeros(capacity, np.float32)
        # 1.0 only for true terminations: a time-limit truncation still
        # bootstraps from next_obs.
        self.terminated = np.zeros(capacity, np.float32)
        self.pos, self.size = 0, 0

    def add(self, obs, action, reward, next_obs, terminated):
        i = self.pos
        self.obs[i], self.next_obs[i] = obs, next_obs
        self.actions[i], self.rewards[i] = action, reward
        self.terminated[i] = float(terminated)
        self.pos = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample_arrays(self, batch_size):
        idx = self.rng.integers(0, self.size, size=batch_size)
        return (self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx], self.terminated[idx])

    def __len__(self):
        return self.size


class EpsilonGreedy:
    """The DQN agents' exploration (a base class): epsilon decays linearly
    from eps_start to eps_end over the first eps_fraction of total_steps;
    explore() draws the coin and a random action on every call, so the
    numpy stream does not depend on the network's output."""

    def init_exploration(self, num_actions, rng, total_steps, eps_start, eps_end, eps_fraction):
        self.num_actions, self.rng = num_actions, rng
        self.eps_start, self.eps_end = eps_start, eps_end
        self.eps_steps = max(1, int(eps_fraction * total_steps))

    def epsilon(self, step):
        frac = min(1.0, step / self.eps_steps)
        return self.eps_start + frac * (self.eps_end - self.eps_start)

    def explore(self, epsilon):
        """A random action with probability epsilon, else None."""
        explore = self.rng.random() < epsilon
        random_action = int(self.rng.integers(self.num_actions))
        return random_action if explore else None


def evaluate(greedy_action, seed, episodes=EVAL_EPISODES):
    """Mean return of `episodes` greedy episodes (env seeds 10000+seed+i)."""
    env = CartPoleEnv(seed=seed)
    returns = []
    for i in range(episodes):
        obs, _ = env.reset(seed=10_000 + seed + i)
        ret, done = 0.0, False
        while not done:
            obs, r, term, trunc, _ = env.step(greedy_action(obs))
            ret += r
            done = term or trunc
        returns.append(ret)
    env.close()
    return float(np.mean(returns))


def print_final_line(prog, steps, wall_s, final_return):
    print(f"{prog}: steps={steps} wall_s={wall_s:.3f} final_return={final_return:.1f}", flush=True)


def train_off_policy(prog, args, env, agent, t0):
    """The DQN loop: act, step, store, update once learning has started;
    then evaluate greedily and print the final line. `agent` has
    select_action(obs, epsilon), epsilon(step), buffer.add(...), update()."""
    # Small budgets (smoke tests) start learning early so update() runs.
    learning_starts = min(500, max(agent.batch_size, args.steps // 10))
    log_every = max(1, args.steps // 5)
    obs, _ = env.reset(seed=args.seed)
    ep_ret, returns = 0.0, []
    for step in range(args.steps):
        action = agent.select_action(obs, agent.epsilon(step))
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.buffer.add(obs, action, reward, next_obs, terminated)
        obs, ep_ret = next_obs, ep_ret + reward
        if terminated or truncated:
            returns.append(ep_ret)
            obs, _ = env.reset()
            ep_ret = 0.0
        if step + 1 >= learning_starts:
            agent.update()
        if not args.quiet and (step + 1) % log_every == 0:
            recent = np.mean(returns[-10:]) if returns else float("nan")
            print(f"{prog}: step {step + 1}/{args.steps} episodes "
                  f"{len(returns)} mean_return(last 10) {recent:.1f} "
                  f"eps {agent.epsilon(step):.2f}", flush=True)
    env.close()
    final_return = evaluate(agent.select_action, args.seed)
    print_final_line(prog, args.steps, time.perf_counter() - t0, final_return)
    return 0
