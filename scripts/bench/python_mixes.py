#!/usr/bin/env python3
"""Pure-Python loops of different mixes, for measuring how a profiler slows
the interpreter and how well rlscope's correction undoes it:

  python_mixes.py MIX [--iterations N]

  arith     attribute loads, arithmetic, a dict and a list subscript, a
            branch: bytecode only, no call
  calls     a trivial Python function called in a loop (about 3 bytecodes
            a call)
  methods   a small method called in a loop
  strings   string formatting and methods (time in C builtins)
  comp      list comprehensions inside a generator (many short frames)
  mixed     a small method's typical work (attribute loads and stores, float
            arithmetic, a subscript store) every 4th iteration called,
            otherwise inline

Prints "MIX <milliseconds> ms" (the loop alone, not start-up)."""
import argparse
import sys
import time


class Point:
    def __init__(self):
        self.a = 1
        self.b = 2

    def shifted(self, x):
        return self.a + x


def arith(n):
    p = Point()
    s = 0
    d = {"k": 1}
    items = [1, 2, 3]
    for i in range(n):
        s += p.a * i + p.b
        s ^= d["k"] + items[i % 3]
        if s > 1 << 40:
            s = 0
    return s


def plus_one(x):
    return x + 1


def calls(n):
    s = 0
    for _ in range(n):
        s = plus_one(s)
    return s


def methods(n):
    p = Point()
    s = 0
    for _ in range(n):
        s = p.shifted(s) & 0xFFFF
    return s


def strings(n):
    out = []
    for i in range(n // 10):
        s = "k%d" % i
        out.append(s.upper() + s[1:])
    return len(out)


def comp(n):
    return sum(len([x * 2 for x in range(50) if x & 1]) for _ in range(n // 50))


class State:
    def __init__(self):
        self.value = 0
        self.scale = 0.99
        self.history = [0.0] * 8


def step(state):
    value = state.value
    if value > 1000:
        value = 0
    scaled = value * state.scale + 0.5
    state.history[value & 7] = scaled
    state.value = value + 1
    return scaled


def mixed(n):
    state = State()
    for i in range(n // 2):
        if i & 3 == 0:
            step(state)
        else:
            value = state.value
            if value > 1000:
                value = 0
            scaled = value * state.scale + 0.5
            state.history[value & 7] = scaled
            state.value = value + 1
    return state.value


MIXES = {f.__name__: f for f in (arith, calls, methods, strings, comp, mixed)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mix", choices=sorted(MIXES))
    parser.add_argument("--iterations", type=int, default=2_000_000)
    args = parser.parse_args()
    begin = time.perf_counter()
    MIXES[args.mix](args.iterations)
    print(f"{args.mix} {(time.perf_counter() - begin) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
