#!/usr/bin/env python3
"""End-to-end tests of the sys.monitoring backend (CPython 3.12+), with a
standard-library program (python_programs/stdlib_rl.py) that prints what it
did: the ground truth of each check. Run with an interpreter of 3.12 or
later (test/CMakeLists.txt finds one; without one the test is not added).

  python_monitoring_e2e_test.py --rlscope BIN --python PYTHON
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, check_hook_breakdown, check_many_call_sites, main, scratch_dir  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "stdlib_rl.py")
STEPS = 300


def instances(process):
    counted = {}
    for row in process["transitions"]:
        counted[row["operation"]] = max(counted.get(row["operation"], 0), row["operation_instances"])
    return counted


def time_of(report, pid, operation):
    return sum(row["ns"] for row in report["rows"]
               if row["process"] == pid and row["operation"] == operation and row["resource"] != "GPU")


def calls_at(process, function):
    return sum(line["calls"] for line in process["python_lines"] if line["function"] == function)


class Monitoring(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        version = subprocess.run([ARGS.python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                                 capture_output=True, text=True, timeout=60)
        if version.stdout.strip() != "True":
            raise unittest.SkipTest(f"{ARGS.python} is older than 3.12: no sys.monitoring")
        plain = subprocess.run([ARGS.python, PROGRAM, str(STEPS)], capture_output=True, text=True, timeout=120,
                               check=True)
        cls.plain_stdout = plain.stdout
        cls.did = json.loads(plain.stdout.strip().splitlines()[-1])

    def profile(self, env=None):
        run = ProfiledRun(self, [ARGS.python, PROGRAM, str(STEPS)], options=("--quiet",), env=env)
        (process,) = run.report["processes"]
        return run, process

    def test_the_program_runs_as_it_does_without_rlscope(self):
        # Its own cProfile included: rlscope leaves it the profiler's tool id.
        run, _ = self.profile()
        self.assertEqual(run.result.stdout, self.plain_stdout)
        self.assertTrue(self.did["cprofile_saw_sum"])

    def test_operations_and_native_calls_of_every_kind_are_seen(self):
        _, process = self.profile()
        self.assertEqual(process["problems"], [])
        counted = instances(process)
        # Every reset (the first, one per wall) and step is simulation, the
        # steps that hit a wall included: their exception closed it.
        self.assertEqual(counted.get("simulation"), 1 + self.did["walls"] + self.did["steps"], counted)
        # Walker.act a step, and the stand-in for a jitted Planner.act each
        # step that got past the wall (it takes the rule of what it wraps).
        # The jitted `update` is backprop by its name, run for run.
        self.assertEqual(counted.get("inference"), self.did["steps"] + self.did["added"], counted)
        self.assertEqual(counted.get("backprop"), self.did["added"], counted)
        # Walker.act makes two native calls a step, both of callables
        # of their own C types, which the profile function does not report:
        # libc's getppid and getpid through ctypes. Corridor.step's
        # two are an extension module's function and a C method.
        self.assertEqual(calls_at(process, "Walker.act"), 2 * self.did["steps"])
        self.assertEqual(calls_at(process, "Corridor.step"), 2 * self.did["steps"])
        names = {thread["name"] for thread in process["threads"]}
        self.assertIn("hasher", names)

    def test_a_fork_child_keeps_the_tool(self):
        script = ("import _hashlib, os\n"
                  "class Walker:\n"
                  "    def act(self, o):\n"
                  "        return _hashlib.compare_digest(str(o), 'o')\n"
                  "pid = os.fork()\n"
                  "if pid == 0:\n"
                  "    for i in range(50):\n"
                  "        Walker().act(i)\n"
                  "    os._exit(0)\n"
                  "os.waitpid(pid, 0)\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script], options=("--quiet",))
        children = [p for p in run.report["processes"] if p["forked_from"] != 0]
        self.assertEqual(len(children), 1, run.report["processes"])
        self.assertEqual(instances(children[0]).get("inference"), 50)
        self.assertEqual(calls_at(children[0], "Walker.act"), 50)

    def run_stand_in_for_jit(self, computes, calls=40):
        """A stand-in for JAX: jax/_src/api.py in a site-packages folder of
        its own (a package by its layout) with a value_and_grad, flax's
        Module.apply likewise, and for jax.jit a ctypes callback (a
        callable of a C type that calls back into Python at its first
        call, as a jitted function traces then) with the traced function, named
        nothing any rule knows, as __wrapped__. `computes`: "gradient"
        (its trace takes one), "forward" (it applies a flax module) or
        "nothing". Returns the calls of the stand-in, by operation."""
        site = os.path.join(scratch_dir(self), "venv", "lib", "site-packages")
        os.makedirs(os.path.join(site, "jax", "_src"))
        os.makedirs(os.path.join(site, "flax", "linen"))
        for name, text in (("jax/__init__.py", ""), ("jax/_src/__init__.py", ""),
                           ("jax/_src/api.py", "def value_and_grad(f):\n"
                                               "    def value_and_grad_f(*args):\n"
                                               "        return f(*args), 0.0\n"
                                               "    return value_and_grad_f\n"),
                           ("flax/__init__.py", ""), ("flax/linen/__init__.py", ""),
                           ("flax/linen/module.py", "class Module:\n"
                                                    "    def apply(self, x):\n"
                                                    "        return x * 3.0\n")):
            with open(os.path.join(site, name), "w") as f:
                f.write(text)
        body = {"gradient": "value_and_grad(lambda v: v * 2.0)(x)[0]", "forward": "Module().apply(x)",
                "nothing": "x * 2.0"}[computes]
        script = ("import ctypes\n"
                  "from jax._src.api import value_and_grad\n"
                  "from flax.linen.module import Module\n"
                  "def polish(x):\n"
                  f"    return {body}\n"
                  "traced = []\n"
                  "def trace():\n"
                  "    if not traced:  # Only the first call traces, as jax.jit's.\n"
                  "        traced.append(polish(3.0))\n"
                  "    return 0\n"
                  "stand_in = ctypes.CFUNCTYPE(ctypes.c_int)(trace)\n"
                  "stand_in.__wrapped__ = polish\n"
                  f"for _ in range({calls}):\n"
                  "    stand_in()\n")
        program = os.path.join(scratch_dir(self), f"jit_stand_in_{computes}.py")
        with open(program, "w") as f:
            f.write(script)
        run = ProfiledRun(self, [ARGS.python, program], options=("--quiet",), env=dict(os.environ, PYTHONPATH=site))
        (process,) = run.report["processes"]
        by_operation = {}
        for line in process["python_lines"]:
            if "stand_in()" in line["source"]:
                by_operation[line["operation"]] = by_operation.get(line["operation"], 0) + line["calls"]
        return by_operation

    def test_a_jitted_function_whose_trace_takes_a_gradient_is_backprop(self):
        # The first call traces (its gradient transform opens backprop inside
        # it, but the call began before any operation: start-up); every
        # later call is backprop as a whole.
        self.assertEqual(self.run_stand_in_for_jit("gradient"), {"startup": 1, "backprop": 39})
        # The same without the gradient: no operation at all.
        self.assertNotIn("backprop", self.run_stand_in_for_jit("nothing"))

    def test_a_jitted_function_whose_trace_applies_a_module_is_a_forward_pass(self):
        # Its trace applies a flax module: every later call is a forward
        # pass, acting here (no training step follows).
        self.assertEqual(self.run_stand_in_for_jit("forward"), {"startup": 1, "inference": 39})
        self.assertNotIn("inference", self.run_stand_in_for_jit("nothing"))

    def test_native_calls_made_by_library_code_are_on_the_users_running_line(self):
        # gauges.note is reported (a call), then `with gauge:` and
        # `gauge[i]` enter the library with no call reported from main's
        # frame: each of the three lines makes one native call a step, and
        # each must be its own row, not the row of the latest reported call.
        site = os.path.join(scratch_dir(self), "venv", "lib", "site-packages")
        os.makedirs(os.path.join(site, "gauges"))
        with open(os.path.join(site, "gauges", "__init__.py"), "w") as f:
            f.write("import _hashlib\n"
                    "class Gauge:\n"
                    "    def __enter__(self):\n"
                    "        _hashlib.compare_digest('a', 'b')\n"
                    "        return self\n"
                    "    def __exit__(self, *exc):\n"
                    "        return False\n"
                    "    def __getitem__(self, i):\n"
                    "        return _hashlib.compare_digest(str(i), '1')\n"
                    "def note(i):\n"
                    "    return _hashlib.compare_digest(str(i), '2')\n")
        steps = 120
        program = os.path.join(os.path.dirname(PROGRAM), "user_lines.py")
        run = ProfiledRun(self, [ARGS.python, program, str(steps)], options=("--quiet",),
                          env=dict(os.environ, PYTHONPATH=site))
        (process,) = run.report["processes"]
        self.assertEqual(process["problems"], [])
        calls = {}
        for line in process["python_lines"]:
            if line["function"] == "main":
                calls[line["source"].strip()] = calls.get(line["source"].strip(), 0) + line["calls"]
        self.assertEqual(calls, {"gauges.note(i)": steps, "with gauge:": steps, "total += gauge[i]": steps})

    def test_the_profile_function_can_be_asked_for_and_misses_other_callables(self):
        run, process = self.profile(env=dict(os.environ, RLSCOPE_PYTHON_HOOK="profile"))
        self.check_profile_function(run, process)

    def check_profile_function(self, run, process):
        self.assertEqual(run.result.stdout, self.plain_stdout)
        self.assertGreater(time_of(run.report, process["pid"], "inference"), 0)
        self.assertEqual(calls_at(process, "Walker.act"), 0)
        self.assertEqual(calls_at(process, "Corridor.step"), 2 * self.did["steps"])

    def test_native_calls_from_many_places_of_one_loop_are_each_on_their_line(self):
        check_many_call_sites(self, ARGS.python)

    def test_sites_that_call_python_functions_stop_calling_back(self):
        # Each step calls two Python functions; once the user's running
        # line has been checked, their sites are disabled (their starts are
        # events of their own), so "call of python" is timed about never,
        # where keeping them would time one in 256 of 2 * steps. The
        # helper's native calls are all still seen.
        steps = 20000
        program = os.path.join(os.path.dirname(PROGRAM), "python_call_sites.py")

        def profiled(**variables):
            env = dict(os.environ, RLSCOPE_HOOK_BREAKDOWN="1", **variables)
            run = ProfiledRun(self, [ARGS.python, program, str(steps)], options=("--quiet",), env=env)
            self.assertEqual(run.result.stdout.split()[0], str(steps))
            parts = {match.group(1): int(match.group(2)) for match in
                     re.finditer(r"python hook part (.+?) +(\d+) samples", run.result.stderr)}
            (process,) = run.report["processes"]
            dropped = process["dropped_events"]
            self.assertLessEqual(calls_at(process, "encode"), steps)
            self.assertGreaterEqual(calls_at(process, "encode"), steps - dropped, process["python_lines"])
            return parts.get("call of python", 0)

        self.assertLess(profiled(), 16)
        # The control: with nothing disabled the same loop's sites are timed.
        self.assertGreater(profiled(RLSCOPE_PYTHON_DISABLE="0"), 60)

    def test_a_code_object_at_a_freed_ones_address_has_its_own_lines(self):
        # Functions compiled, called once and freed in a loop: a new code
        # object often takes the freed one's address, with its native call
        # at the same offset but on another line. Each line must have
        # exactly the calls the program made there.
        program = os.path.join(os.path.dirname(PROGRAM), "reused_code_sites.py")
        run = ProfiledRun(self, [ARGS.python, program, "3000"], options=("--quiet",))
        made = {int(line): calls for line, calls in json.loads(run.result.stdout.splitlines()[-1]).items()}
        (process,) = run.report["processes"]
        seen = {line["line"]: line["calls"] for line in process["python_lines"]
                if line["file"].endswith("generated_probe.py")}
        if process["dropped_events"]:
            for line, calls in made.items():
                self.assertLessEqual(seen.get(line, 0), calls, (seen, made))
                self.assertGreaterEqual(seen.get(line, 0), calls - process["dropped_events"], (seen, made))
        else:
            self.assertEqual(seen, made)

    def test_hook_breakdown_times_every_kind_of_callback(self):
        check_hook_breakdown(self, ARGS.python)

    def test_callbacks_that_do_nothing_record_nothing_and_say_so(self):
        # RLSCOPE_PYTHON_HOOK=noop, the measuring aid for the interpreter's
        # side of a callback: the same events reach rlscope, nothing is kept.
        run, process = self.profile(env=dict(os.environ, RLSCOPE_PYTHON_HOOK="noop"))
        self.assertEqual(run.result.stdout, self.plain_stdout)
        self.assertTrue(any("RLSCOPE_PYTHON_HOOK=noop" in problem for problem in process["problems"]),
                        process["problems"])
        self.assertEqual({operation for operation, count in instances(process).items() if count}, set())
        self.assertEqual(calls_at(process, "Corridor.step"), 0)
        self.assertEqual(time_of(run.report, process["pid"], "inference"), 0)

    def test_tool_ids_held_by_other_tools_fall_back_to_the_profile_function(self):
        # A .pth file of the user's site directory runs before rlscope's
        # sitecustomize: it takes both ids rlscope would use.
        base = tempfile.mkdtemp(dir=scratch_dir(self))
        user_site = subprocess.run([ARGS.python, "-c", "import site; print(site.getusersitepackages())"],
                                   capture_output=True, text=True, env=dict(os.environ, PYTHONUSERBASE=base),
                                   timeout=60, check=True).stdout.strip()
        os.makedirs(user_site)
        with open(os.path.join(user_site, "claim.pth"), "w") as f:
            f.write("import sys; sys.monitoring.use_tool_id(3, 'tool-a'); sys.monitoring.use_tool_id(4, 'tool-b')\n")
        run, process = self.profile(env=dict(os.environ, PYTHONUSERBASE=base))
        self.assertTrue(any("tool ids rlscope can take are held (by tool-b, tool-a)" in problem
                            for problem in process["problems"]), process["problems"])
        self.check_profile_function(run, process)

    def test_sites_disabled_while_capture_is_closed_are_seen_in_every_window(self):
        # Each round runs the same call sites closed, then inside a window:
        # every window must see all of its calls (the sites disabled while
        # closed are enabled again), and the jitted stand-in's instances
        # are counted closed or open.
        rounds, calls = 5, 200
        program = os.path.join(os.path.dirname(PROGRAM), "closed_capture_sites.py")
        run = ProfiledRun(self, [ARGS.python, program, str(rounds), str(calls)],
                          options=("--quiet", "--capture-range", "api"))
        (process,) = run.report["processes"]
        self.assertEqual(process["problems"], [])
        self.assertEqual(len(run.report["capture"]["windows_ns"]), rounds + 1)
        self.assertEqual(calls_at(process, "roots"), rounds * calls)
        # The flat loop's window: the restart comes through a pending call,
        # at the interpreter's next check, so its first call may be missed.
        flat = sum(line["calls"] for line in process["python_lines"] if "compare_digest(str(i + 1)" in line["source"])
        self.assertGreaterEqual(flat, calls - 1)
        self.assertLessEqual(flat, calls)
        (acting,) = [e for e in run.report["capture"]["whole_run_estimate"] if e["operation"] == "inference"]
        self.assertEqual((acting["window_instances"], acting["run_instances"]), (rounds, 2 * rounds))


if __name__ == "__main__":
    main(extra_arguments=("--python",))
