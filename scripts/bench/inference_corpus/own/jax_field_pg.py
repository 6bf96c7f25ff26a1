"""A policy-gradient agent in JAX, written the way JAX users write one with
a Brax/MJX-style environment: the environment is pure functions of a state
(`Field.reset(key)`, `Field.step(state, action)`), jitted as a whole; the
policy is a flax module whose sampling is a jitted function named for
nothing (`pick`); training is a jitted `improve` that takes the gradient
with jax.value_and_grad and updates with optax. Nothing in it is named
after an operation. Needs jax, flax and optax.

  jax_field_pg.py [ITERATIONS] [HORIZON]
"""
import sys
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class FieldState(NamedTuple):
    position: jnp.ndarray
    velocity: jnp.ndarray
    goal: jnp.ndarray
    t: jnp.ndarray
    obs: jnp.ndarray
    reward: jnp.ndarray
    done: jnp.ndarray


class Field:
    """A point mass pushed across a plane towards a goal."""

    horizon = 50

    def reset(self, key):
        position_key, goal_key = jax.random.split(key)
        position = jax.random.uniform(position_key, (2,), minval=-1.0, maxval=1.0)
        goal = jax.random.uniform(goal_key, (2,), minval=-1.0, maxval=1.0)
        velocity = jnp.zeros(2)
        return FieldState(position, velocity, goal, jnp.array(0), self.observe(position, velocity, goal),
                          jnp.array(0.0), jnp.array(False))

    def step(self, state, action):
        velocity = 0.9 * state.velocity + 0.1 * jnp.clip(action, -1.0, 1.0)
        position = jnp.clip(state.position + 0.1 * velocity, -2.0, 2.0)
        distance = jnp.linalg.norm(position - state.goal)
        t = state.t + 1
        return FieldState(position, velocity, state.goal, t, self.observe(position, velocity, state.goal),
                          -distance, (distance < 0.05) | (t >= self.horizon))

    @staticmethod
    def observe(position, velocity, goal):
        return jnp.concatenate([position, velocity, goal - position])


class GaussianHead(nn.Module):
    @nn.compact
    def __call__(self, obs):
        h = nn.tanh(nn.Dense(64)(obs))
        h = nn.tanh(nn.Dense(64)(h))
        mean = nn.Dense(2)(h)
        log_std = self.param("log_std", nn.initializers.constant(-0.5), (2,))
        return mean, log_std


def log_density(mean, log_std, action):
    return jnp.sum(-0.5 * ((action - mean) / jnp.exp(log_std)) ** 2 - log_std - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


def main(iterations, horizon):
    field = Field()
    head = GaussianHead()
    key = jax.random.PRNGKey(0)
    key, init_key, reset_key = jax.random.split(key, 3)
    params = head.init(init_key, jnp.zeros(6))
    tx = optax.adam(3e-3)
    opt_state = tx.init(params)
    advance = jax.jit(field.step)
    restart = jax.jit(field.reset)

    @jax.jit
    def pick(params, obs, key):
        mean, log_std = head.apply(params, obs)
        return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)

    def surrogate(params, obs, actions, returns):
        mean, log_std = head.apply(params, obs)
        advantage = (returns - returns.mean()) / (returns.std() + 1e-6)
        return -(log_density(mean, log_std, actions) * advantage).mean()

    @jax.jit
    def improve(params, opt_state, obs, actions, returns):
        loss, grads = jax.value_and_grad(surrogate)(params, obs, actions, returns)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    state = restart(reset_key)
    episodes, finished_return, episode_return = 0, 0.0, 0.0
    for iteration in range(iterations):
        seen, taken, earned = [], [], []
        for _ in range(horizon):
            key, noise_key = jax.random.split(key)
            action = np.asarray(pick(params, state.obs, noise_key))
            after = advance(state, action)
            seen.append(state.obs)
            taken.append(action)
            earned.append(float(after.reward))
            episode_return += earned[-1]
            if bool(after.done):
                key, reset_key = jax.random.split(key)
                state = restart(reset_key)
                episodes, finished_return, episode_return = episodes + 1, episode_return, 0.0
            else:
                state = after
        obs_batch, action_batch = jnp.stack(seen), jnp.asarray(np.stack(taken))
        returns = np.zeros(horizon, dtype=np.float32)
        running = 0.0
        for t in reversed(range(horizon)):
            running = earned[t] + 0.97 * running
            returns[t] = running
        params, opt_state, loss = improve(params, opt_state, obs_batch, action_batch, jnp.asarray(returns))
        if iteration % 10 == 0:
            print(f"iteration {iteration} loss {float(loss):.3f} episodes {episodes} last return {finished_return:.2f}")
    print("done")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40, int(sys.argv[2]) if len(sys.argv) > 2 else 64)
