"""An RL-shaped loop in the standard library alone, for the Python level on
interpreters that have no numpy or torch (sys.monitoring on 3.12+): an env
found by its step/reset methods, a policy's act, a buffer, native calls of
three kinds (an extension module's function, a C method, and callables of
their own C types: two ctypes functions, which only sys.monitoring
reports), two such callables standing in for jitted
functions (a C function with a Python function as __wrapped__; one wraps a
decorated method, a wrapper of a wrapper, as a jitted flax apply does), a
generator, an exception unwinding out of an operation, a worker thread and
cProfile used by the program itself. Prints what it did, last, as JSON.

  stdlib_rl.py STEPS
"""
import cProfile
import ctypes
import functools
import hashlib
import io
import json
import pstats
import sys
import threading

LIBC = ctypes.CDLL(None)


class Corridor:
    def __init__(self):
        self.position = 0

    def reset(self):
        self.position = 0
        return self.position

    def step(self, action):
        self.position += action
        digest = hashlib.sha256(str(self.position).encode()).hexdigest()
        if self.position % 7 == 0:
            raise ValueError("a wall")  # Unwinds out of the operation.
        return self.position, int(digest[:2], 16) / 255.0


class Walker:
    def act(self, observation):
        LIBC.getppid()
        LIBC.getpid()
        return 1 if len(repr({"o": observation})) % 2 else 2


class TrajectoryBuffer:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(json.loads(json.dumps(item)))

    def sample(self):
        for item in self.items[-4:]:
            yield item


def boundary(method):
    """A decorator of the kind libraries put on their entry points (flax's
    traceback filter on Module.apply): a Python function wrapping another."""
    @functools.wraps(method)
    def filtered(*args, **kwargs):
        return method(*args, **kwargs)
    return filtered


class Planner:
    @boundary
    def act(self, observation):  # Never runs: a C function stands in for its compiled form.
        raise AssertionError("not called")


def update(batch):  # As above.
    raise AssertionError("not called")


def compiled(function):
    """A C function that wraps `function` the way jax.jit wraps what it
    compiles: a callable of a C type with `function` as __wrapped__."""
    stand_in = ctypes.CDLL(None).getpid
    stand_in.__wrapped__ = function
    return stand_in


def background(results):
    results.append(sum(len(hashlib.md5(str(i).encode()).hexdigest()) for i in range(2000)))


def main():
    steps = int(sys.argv[1])
    env, walker, buffer = Corridor(), Walker(), TrajectoryBuffer()
    worker_results = []
    worker = threading.Thread(target=background, args=(worker_results,), name="hasher")
    worker.start()
    jitted_act, jitted_update = compiled(Planner().act), compiled(update)
    observation = env.reset()
    walls = 0
    sampled = 0
    for _ in range(steps):
        action = walker.act(observation)
        try:
            observation, reward = env.step(action)
        except ValueError:
            walls += 1
            observation = env.reset()
            continue
        buffer.add([observation, reward])
        sampled += len(list(buffer.sample()))
        jitted_act()
        jitted_update()
    worker.join()
    profile = cProfile.Profile()
    profile.enable()
    sum(range(1000))
    profile.disable()
    listing = io.StringIO()
    pstats.Stats(profile, stream=listing).print_stats()
    print(json.dumps({"steps": steps, "walls": walls, "added": len(buffer.items), "sampled": sampled,
                      "worker": worker_results, "cprofile_saw_sum": "sum" in listing.getvalue()}))


main()
