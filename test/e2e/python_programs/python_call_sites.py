"""A loop that calls Python functions far more often than native code, as
torch's module machinery and environment wrappers do: each step calls a
small Python helper from two places, and the helper makes one native call
(_hashlib's compare_digest, a C function outside the interpreter in
Debian's and pyenv's builds). The native calls' count is the ground truth
the report's lines are checked against.

  python_call_sites.py STEPS

Prints the number of steps and a checksum of what the calls returned.
"""
import sys

import _hashlib


def scale(value, factor):
    return value * factor + 1


def encode(text):
    return 1 + _hashlib.compare_digest(text, "rl-step")  # the helper's native call


steps = int(sys.argv[1])
checksum = 0
for step in range(steps):
    checksum += scale(step, 3)  # a Python function's call site
    checksum += encode("rl-step")  # another, whose callee calls native code
    checksum %= 1_000_003
print(steps, checksum)
