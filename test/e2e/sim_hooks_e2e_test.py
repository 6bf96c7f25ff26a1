#!/usr/bin/env python3
"""End-to-end tests of the simulator hooks: calls into a simulator library
(test/native/libsimtest.so) become kSimulatorCall events (`simulator` in
`rlscope dump`, `Simulator` time in the report) whichever way the program
reaches them -- the program's PLT, a library dlopened later, dlsym on a
handle, Python ctypes -- and the program's output stays byte-for-byte what
it is without rlscope.

  sim_hooks_e2e_test.py --rlscope BIN --client BIN --simtest LIB --caller LIB --late-caller LIB
                        [unittest args]
"""
import collections
import glob
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, check_settled, main, run_rlscope, scratch_dir  # noqa: E402

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
RULE = "*libsimtest*:simtest_*"

# ctypes resolves every function with dlsym(handle, name): neither
# LD_PRELOAD nor GOT patching sees those calls, only the dlsym interposer.
CTYPES_SCRIPT = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.simtest_busy_wait_ns.argtypes = [ctypes.c_long]
lib.simtest_busy_wait_ns.restype = None
for _ in range(3):
    lib.simtest_busy_wait_ns(1000000)
f = lib.simtest_int_args
f.restype = ctypes.c_long
f.argtypes = [ctypes.c_long] * 10
print(f(*range(1, 11)))
d = lib.simtest_double_args
d.restype = ctypes.c_double
d.argtypes = [ctypes.c_double] * 12
print(d(*[i / 7 for i in range(12)]).hex())
print(lib.simother_unhooked(20))
"""


def simulator_calls(run_dir, kinds=None):
    """[(name, duration_ns)] of every kSimulatorCall event of the run, from `rlscope dump`;
    `kinds` (a Counter), when given, counts the (kind, name) of every event."""
    calls = []
    for trace in sorted(glob.glob(os.path.join(run_dir, "trace", "*.rlt"))):
        dump = run_rlscope("dump", trace)
        if dump.returncode != 0:
            raise AssertionError(dump.stderr)
        strings = {}
        for line in dump.stdout.splitlines():
            fields = line.split()
            if fields[:1] == ["string"] and len(fields) >= 4:
                strings[int(fields[1])] = " ".join(fields[3:])
            values = dict(field.split("=", 1) for field in fields[1:] if "=" in field)
            if kinds is not None and "name" in values and "dur" in values:
                kinds[(fields[0], strings.get(int(values["name"]), "?"))] += 1
            if fields[:1] == ["simulator"]:
                calls.append((strings.get(int(values["name"]), "?"), int(values["dur"])))
    return calls


class SimulatorRun:
    """The same command bare and under `rlscope run`; keeps both outputs."""

    def __init__(self, test, command, sim=(RULE,), env=None):
        self.bare = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        test.assertEqual(self.bare.returncode, 0, self.bare.stderr)
        self.dir = os.path.join(scratch_dir(test), "run")
        options = [arg for rule in sim for arg in ("--sim", rule)]
        self.result = run_rlscope("run", "--quiet", "--out", self.dir, *options, "--", *command, env=env)
        test.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.kinds = collections.Counter()
        self.calls = simulator_calls(self.dir, self.kinds)
        self.counts = collections.Counter(name for name, _ in self.calls)
        with open(os.path.join(self.dir, "report.json")) as f:
            self.report = json.load(f)
        self.simulator_ns = sum(row["ns"] for row in self.report["rows"] if row["category"] == "Simulator")


class NativeProgram(unittest.TestCase):
    def client(self, **kwargs):
        return SimulatorRun(self, [ARGS.client, ARGS.caller], **kwargs)

    def test_plt_dlopen_and_dlsym_calls_become_simulator_calls(self):
        run = self.client()
        self.assertEqual(run.result.stdout, run.bare.stdout)  # Every result bit-exact.
        self.assertIn("runpath_dlopen 1", run.result.stdout)  # dlopen still searched the caller's RUNPATH.
        # 3 through the program's PLT, 2 from the library dlopened later
        # (through its own lazy PLT), 1 through dlsym.
        self.assertEqual(run.counts["simtest_busy_wait_ns"], 6, run.calls)
        self.assertEqual(run.counts["simtest_int_args"], 2, run.calls)  # PLT, then dlsym.
        for name in ("simtest_double_args", "simtest_long_double", "simtest_pair", "simtest_variadic"):
            self.assertEqual(run.counts[name], 1, (name, run.calls))
        for name, duration_ns in run.calls:
            if name == "simtest_busy_wait_ns":  # A 1 ms busy wait each.
                self.assertGreaterEqual(duration_ns, 1_000_000)
                self.assertLess(duration_ns, 50_000_000)
        # The report counts them as Simulator time: at least the six waits.
        self.assertGreaterEqual(run.simulator_ns, 6_000_000)
        self.assertLessEqual(run.simulator_ns, sum(duration for _, duration in run.calls))
        # Installing the hooks is rlscope's own time, and `rlscope dump` names every kind.
        self.assertGreater(run.kinds[("profiler_overhead", "simulator hook installation")], 0, run.kinds)
        self.assertFalse([kind for kind in run.kinds if kind[0] == "unknown"], run.kinds)
        # The trampolines' calls keep the settled times true.
        self.assertGreater(check_settled(self, os.path.join(run.dir, "trace"))[0], 0)

    def test_rlscope_sim_from_the_environment_works_too(self):
        run = self.client(sim=(), env=dict(os.environ, RLSCOPE_SIM="*libsimtest*:simtest_busy*"))
        self.assertEqual(run.result.stdout, run.bare.stdout)
        self.assertEqual(dict(run.counts), {"simtest_busy_wait_ns": 6})

    def test_without_a_matching_rule_nothing_is_hooked(self):
        run = self.client(sim=())
        self.assertEqual(run.result.stdout, run.bare.stdout)
        self.assertIn("runpath_dlopen 1", run.result.stdout)
        self.assertEqual(run.calls, [])
        self.assertEqual(run.simulator_ns, 0)

    def test_a_malformed_rule_is_reported_once_and_skipped(self):
        env = dict(os.environ, RLSCOPE_SIM="no-colon-here,*libsimtest*:simtest_int_args")
        run = self.client(sim=(), env=env)
        self.assertEqual(run.result.stderr.count("'no-colon-here' is not LIBRARY-GLOB:SYMBOL-GLOB"), 1,
                         run.result.stderr)
        self.assertEqual(dict(run.counts), {"simtest_int_args": 2})
        # The report says it too, for a run whose stderr was not kept.
        problems = [p for process in run.report["processes"] for p in process["problems"]]
        self.assertEqual(sum("'no-colon-here' is not LIBRARY-GLOB:SYMBOL-GLOB" in p for p in problems), 1, problems)

    def test_sim_option_wants_one_library_pattern_pair(self):
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--out", out, "--sim", "no-colon", "--", "true")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--sim wants LIB:PATTERN", result.stderr)


# Libraries loaded while no simulator library is are not scanned until one
# is. A library calling the simulator through its own lazy PLT, loaded
# with the simulator (its dependency) after Python's extension modules.
LATE_CALLER_SCRIPT = """
import ctypes, sys
import _decimal, _json  # Extension modules loaded before any simulator library.
caller = ctypes.CDLL(sys.argv[1])
caller.simlazy_busy_loop.argtypes = [ctypes.c_int, ctypes.c_long]
print(caller.simlazy_busy_loop(2, 1000))
"""

# A library loaded before the simulator whose calls it makes: its lazy PLT
# slots bind to the simulator that a later RTLD_GLOBAL dlopen brings.
CALLER_BEFORE_SIMULATOR_SCRIPT = """
import ctypes, os, sys
caller = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY)
ctypes.CDLL(sys.argv[2], mode=os.RTLD_GLOBAL | os.RTLD_NOW)
caller.simlate_busy_loop.argtypes = [ctypes.c_int, ctypes.c_long]
print(caller.simlate_busy_loop(3, 1000))
"""


class PythonCtypes(unittest.TestCase):
    def test_a_caller_loaded_after_start_up_is_hooked(self):
        run = SimulatorRun(self, [PYTHON, "-c", LATE_CALLER_SCRIPT, ARGS.caller])
        self.assertEqual(run.result.stdout, run.bare.stdout)
        self.assertEqual(dict(run.counts), {"simtest_busy_wait_ns": 2}, run.calls)

    def test_a_caller_loaded_before_its_simulator_is_hooked_once_the_simulator_is(self):
        run = SimulatorRun(self, [PYTHON, "-c", CALLER_BEFORE_SIMULATOR_SCRIPT, ARGS.late_caller, ARGS.simtest])
        self.assertEqual(run.result.stdout, run.bare.stdout)
        self.assertEqual(dict(run.counts), {"simtest_busy_wait_ns": 3}, run.calls)

    def test_ctypes_calls_become_simulator_calls(self):
        run = SimulatorRun(self, [PYTHON, "-c", CTYPES_SCRIPT, ARGS.simtest])
        self.assertEqual(run.result.stdout, run.bare.stdout)
        self.assertEqual(dict(run.counts),
                         {"simtest_busy_wait_ns": 3, "simtest_int_args": 1, "simtest_double_args": 1},
                         run.calls)
        self.assertGreaterEqual(run.simulator_ns, 3_000_000)


MUJOCO_MODEL = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
<body pos="0 0 1"><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>"""

# The built-in rules on the real thing: MuJoCo's C API through ctypes, by
# bare library name (a dlopen that must keep the caller's search path).
MUJOCO_SCRIPT = """
import ctypes, ctypes.util, sys
mj = ctypes.CDLL(ctypes.util.find_library("mujoco"))
error = ctypes.create_string_buffer(1000)
mj.mj_loadXML.restype = ctypes.c_void_p
mj.mj_loadXML.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
model = mj.mj_loadXML(sys.argv[1].encode(), None, error, len(error))
assert model, error.value
mj.mj_makeData.restype = ctypes.c_void_p
mj.mj_makeData.argtypes = [ctypes.c_void_p]
data = mj.mj_makeData(model)  # Calls mj_resetData inside the library: not a separate call.
for name in ("mj_step", "mj_forward", "mj_resetData"):
    getattr(mj, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p]
for _ in range(100):
    mj.mj_step(model, data)
mj.mj_resetData(model, data)
mj.mj_forward(model, data)
print("stepped")
"""


def have_mujoco():
    probe = subprocess.run([PYTHON, "-c", "import ctypes.util; print(ctypes.util.find_library('mujoco') or '')"],
                           capture_output=True, text=True)
    return probe.stdout.strip() != ""


class RealSimulator(unittest.TestCase):
    @unittest.skipUnless(have_mujoco(), "libmujoco is not installed")
    def test_mujoco_steps_are_simulator_calls_by_default(self):
        model = os.path.join(scratch_dir(self), "box.xml")
        with open(model, "w") as f:
            f.write(MUJOCO_MODEL)
        run = SimulatorRun(self, [PYTHON, "-c", MUJOCO_SCRIPT, model], sim=())
        self.assertEqual(run.result.stdout, "stepped\n")
        self.assertEqual(dict(run.counts), {"mj_step": 100, "mj_resetData": 1, "mj_forward": 1}, run.calls)
        self.assertGreater(run.simulator_ns, 0)


if __name__ == "__main__":
    main(["--client", "--simtest", "--caller", "--late-caller"])
