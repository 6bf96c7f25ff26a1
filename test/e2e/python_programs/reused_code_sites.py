"""Code objects made and freed in a loop, as code generated at run time
is (exec of a template, a jitted wrapper's trampolines): each step
compiles a small function whose one native call (_hashlib's
compare_digest) sits on a line that moves with the step (`step % 7`
blank lines above it), calls it once, and drops it. A new code object
often lands where the last one was freed, with its call at the same
instruction offset, so a place remembered by address alone would carry
the dead one's line.

  reused_code_sites.py STEPS

Prints the number of steps, then a JSON object: {line: calls made there}.
"""
import json
import os
import sys

import _hashlib

# The generated code's file name: beside this script, so it is the user's
# own code and its lines are listed (nothing is written there).
GENERATED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated_probe.py")
steps = int(sys.argv[1])
calls = {}
for step in range(steps):
    blank = step % 7
    source = "\n" * blank + "def probe(text):\n    return _hashlib.compare_digest(text, text)\n"
    namespace = {"_hashlib": _hashlib}
    exec(compile(source, GENERATED, "exec"), namespace)
    namespace["probe"]("rl-step")
    del namespace
    calls[blank + 2] = calls.get(blank + 2, 0) + 1
print(steps)
print(json.dumps(calls))
