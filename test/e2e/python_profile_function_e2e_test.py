#!/usr/bin/env python3
"""End-to-end tests of the profile-function backend of the Python level
(CPython 3.10 and 3.11), run once per such interpreter this machine has.
3.10 lacks parts of the C API 3.11 gives (PyFrame_GetLasti, co_qualname,
PyFrame_GetGlobals): the hook reads the frame and looks names up instead,
and must give the same answers. Ground truth: the program says what it did
(python_programs/qualified_names.py), and its source says where each call
is.

  python_profile_function_e2e_test.py --rlscope BIN --python PYTHON
"""
import ast
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, check_many_call_sites, main  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "qualified_names.py")
STEPS = 40


def version_of(python):
    answer = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                            capture_output=True, text=True, timeout=60, check=True)
    return tuple(int(part) for part in answer.stdout.strip().split("."))


def hash_call_lines(path):
    """{function name: line of its hashlib.md5 call} from the source."""
    with open(path) as f:
        tree = ast.parse(f.read())
    lines = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                        and inner.func.attr == "md5"):
                    lines.setdefault(node.name, inner.lineno)  # The innermost function's own comes first below.
    return lines


class ProfileFunction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.version = version_of(ARGS.python)
        if not (3, 10) <= cls.version < (3, 12):
            raise unittest.SkipTest(f"{ARGS.python} is {cls.version}: not a profile-function interpreter")
        plain = subprocess.run([ARGS.python, PROGRAM, str(STEPS)], capture_output=True, text=True, timeout=120,
                               check=True)
        cls.plain_stdout = plain.stdout
        cls.did = json.loads(plain.stdout.strip().splitlines()[-1])
        cls.profiled = None

    def setUp(self):
        # One profiled run for every test (its report is kept in memory;
        # its directory goes with the first test's clean-up).
        if ProfileFunction.profiled is None:
            ProfileFunction.profiled = ProfiledRun(self, [ARGS.python, PROGRAM, str(STEPS)], options=("--quiet",))
            (ProfileFunction.process,) = ProfileFunction.profiled.report["processes"]

    def test_the_program_runs_as_it_does_without_rlscope(self):
        self.assertEqual(self.profiled.result.stdout, self.plain_stdout)
        self.assertEqual(self.process["problems"], [])

    def test_native_calls_are_on_the_qualified_name_of_each_kind_of_function(self):
        calls = {}
        for line in self.process["python_lines"]:
            calls[line["function"]] = calls.get(line["function"], 0) + line["calls"]
        steps = self.did["steps"]
        # A function defined inside another is found by its name alone on
        # 3.10 (no code object there keeps where it was defined).
        nested = "outer.<locals>.inner" if self.version >= (3, 11) else "inner"
        expected = {
            "Terrain.observe": steps + self.did["resets"],  # Inherited, called on a Ravine: its defining class.
            "Ravine.reset": self.did["resets"],
            "Ravine.step": steps,
            "Ravine.noise": steps,  # staticmethod
            "Ravine.sized": steps,  # classmethod
            "Ravine.depth": steps,  # property
            "Ravine.render": steps,  # behind a functools.wraps decorator
            "choose": steps,
            nested: steps,
            "count_in_background": self.did["background"],  # Another thread's.
        }
        self.assertEqual({name: calls.get(name, 0) for name in expected}, expected, calls)

    def test_each_call_is_on_its_own_line(self):
        where = hash_call_lines(PROGRAM)
        seen = {}
        for line in self.process["python_lines"]:
            if line["function"] != "<module>":
                seen.setdefault(line["function"].split(".")[-1], set()).add(line["line"])
        for function, lines in seen.items():
            self.assertEqual(lines, {where[function]}, (function, self.process["python_lines"]))

    def test_env_methods_found_by_their_class_are_simulation(self):
        # Ravine has step and reset (rules: class-has=step,reset), which
        # needs the method's class, found from its qualified name: its
        # steps, resets and renders.
        counted = {}
        for row in self.process["transitions"]:
            counted[row["operation"]] = max(counted.get(row["operation"], 0), row["operation_instances"])
        self.assertEqual(counted.get("simulation"), 2 * self.did["steps"] + self.did["resets"], counted)

    def test_the_worker_thread_is_traced(self):
        names = {thread["name"] for thread in self.process["threads"]}
        self.assertIn("counter", names)

    def test_native_calls_from_many_places_of_one_loop_are_each_on_their_line(self):
        check_many_call_sites(self, ARGS.python)


if __name__ == "__main__":
    main(extra_arguments=("--python",))
