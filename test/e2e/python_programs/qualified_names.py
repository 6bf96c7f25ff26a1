"""A standard-library RL loop whose native calls are made from functions
of every kind a profile-function hook must name (CPython 3.10 keeps no
qualified name on code objects): a module function, an env's methods, a
method inherited from a base class, a staticmethod, a classmethod, a
property, a method behind a functools.wraps decorator, a nested function,
and a worker thread's function. Every one of them calls hashlib.md5 once
per call (a C function of the _hashlib extension module: one transition
each).
Prints what it did, last, as JSON.

  qualified_names.py STEPS
"""
import functools
import hashlib
import json
import sys
import threading


def logged(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        return method(*args, **kwargs)
    return wrapper


class Terrain:
    def observe(self):
        return hashlib.md5(b"terrain").digest_size % 5


class Ravine(Terrain):
    def __init__(self):
        self.position = 0

    def reset(self):
        self.position = hashlib.md5(b"start").digest_size % 3
        return self.observe()

    def step(self, action):
        self.position += action
        return self.observe(), hashlib.md5(bytes([self.position % 256])).digest_size % 2

    @staticmethod
    def noise(seed):
        return hashlib.md5(seed.to_bytes(4, "little")).digest_size % 7

    @classmethod
    def sized(cls, width):
        return hashlib.md5(cls.__name__.encode()).digest_size % width

    @property
    def depth(self):
        return hashlib.md5(b"depth").digest_size % 11

    @logged
    def render(self):
        return hashlib.md5(b"frame").digest_size


def choose(observation):
    return hashlib.md5(bytes([observation])).digest_size % 2 + 1


def outer(value):
    def inner():
        return hashlib.md5(bytes([value % 256])).digest_size
    return inner()


def count_in_background(did):
    for i in range(200):
        hashlib.md5(str(i).encode())
    did["background"] = 200


def main():
    steps = int(sys.argv[1])
    did = {"steps": steps, "resets": 1}
    worker = threading.Thread(target=count_in_background, args=(did,), name="counter")
    worker.start()
    env = Ravine()
    observation = env.reset()
    total = 0
    for _ in range(steps):
        observation, reward = env.step(choose(observation))
        total += Ravine.noise(observation) + Ravine.sized(9) + env.depth + env.render() % 3 + outer(observation)
    worker.join()
    did["total"] = total
    print(json.dumps(did))


if __name__ == "__main__":
    main()
