#!/usr/bin/env python3
"""End-to-end tests of the Python level (no torch needed): the profile hook
attaches with no change to the script, operations are inferred from the
code's names, explicit operations win, threads and fork children are
covered, user rules extend the defaults, and the program's output is
unchanged.

  python_e2e_test.py --rlscope BIN --python PYTHON --share DIR [unittest args]
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, check_hook_breakdown, check_many_call_sites, main, run_rlscope, scratch_dir  # noqa: E402

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "rl_loop.py")


def time_by(report, pid, key):
    totals = {}
    for row in report["rows"]:
        if row["process"] == pid:
            totals[row[key]] = totals.get(row[key], 0) + row["ns"]
    return totals


def time_of(report, pid, operation, category=None):
    return sum(row["ns"] for row in report["rows"] if row["process"] == pid and row["operation"] == operation
               and (category is None or row["category"] == category))



def uses_monitoring():
    """Whether rlscope captures ARGS.python through sys.monitoring (3.12+)
    rather than a profile function."""
    answer = subprocess.run([ARGS.python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                            capture_output=True, text=True, timeout=60)
    return answer.stdout.strip() == "True" and os.environ.get("RLSCOPE_PYTHON_HOOK") != "profile"

class InferredOperations(unittest.TestCase):
    def test_operations_and_levels_come_from_the_code_without_annotations(self):
        run = ProfiledRun(self, [ARGS.python, LOOP, "400"])
        (process,) = run.report["processes"]
        pid = process["pid"]
        operations = time_by(run.report, pid, "operation")
        # Imports and set-up before the loop are startup; exiting, teardown.
        for expected in ("simulation", "inference", "replay", "backprop", "startup", "teardown"):
            self.assertIn(expected, operations)
        categories = time_by(run.report, pid, "category")
        self.assertGreater(categories.get("Python", 0), 0)
        self.assertGreater(categories.get("Native", 0), 0)  # numpy
        self.assertGreater(time_of(run.report, pid, "simulation", "Native"), 0)
        # Python -> native transitions are counted per operation instance.
        simulation = [t for t in process["transitions"] if t["operation"] == "simulation"
                      and t["from"] == "Python" and t["to"] == "Native"]
        self.assertTrue(simulation)
        self.assertEqual(simulation[0]["operation_instances"], 401)  # 400 steps + reset.
        # Each instance's time: as many as the instances, and adding up to
        # the operation's time on the (one) thread, Wait included.
        stats = {s["operation"]: s for s in process["instance_stats"]}
        self.assertEqual(stats["simulation"]["instances"], 401)
        (thread,) = process["threads"]
        for name in ("simulation", "inference", "replay", "backprop"):
            entry = stats[name]
            thread_ns = sum(r["ns"] for r in thread["rows"] if r["operation"] == name and r["resource"] != "GPU")
            self.assertAlmostEqual(entry["total_ns"], thread_ns, delta=entry["instances"], msg=name)
            self.assertLessEqual(entry["p50_ns"], entry["p95_ns"])
            self.assertLessEqual(entry["p95_ns"], entry["max_ns"])
            self.assertAlmostEqual(entry["mean_ns"] * entry["instances"], entry["total_ns"], delta=entry["instances"])
        self.assertNotIn("startup", stats)  # Not an operation with instances.
        self.assertEqual(run.report["per_step"]["steps"], 401)
        self.assertIn("operation instances (the time one took in its operation; per step: of 401 environment steps)",
                      open(os.path.join(run.out, "report.txt")).read())
        # The Python lines responsible are named: the innermost Python frame
        # (numpy's own wrappers for np.dot; the script's for np.asarray).
        lines = process["python_lines"]
        self.assertTrue(all(line["line"] > 0 for line in lines), lines)
        self.assertTrue(any(line["operation"] == "replay" and "ReplayBuffer.add" in line["code"]
                            and "rl_loop.py" in line["code"] for line in lines), lines)

    def test_native_calls_from_many_places_of_one_loop_are_each_on_their_line(self):
        # A flat script's loop calls native code from more places than the
        # hook keeps inline per code object (CodeInfo::kLines).
        check_many_call_sites(self, ARGS.python)

    def test_hook_breakdown_times_every_kind_of_callback(self):
        check_hook_breakdown(self, ARGS.python)

    def test_explicit_operations_take_precedence(self):
        run = ProfiledRun(self, [ARGS.python, LOOP, "200", "--explicit"])
        pid = run.report["processes"][0]["pid"]
        self.assertGreater(time_of(run.report, pid, "custom_step"), 0)
        # env.step ran only inside the explicit operation: every native call
        # it made is custom_step's, none simulation's (reset's stay). Told
        # by lines, not by time: simulation keeps reset and the glue after
        # it, which a preemption on a busy machine can make long (seen:
        # 16.7 ms against the 1.4 ms a time bound allowed).
        lines = run.report["processes"][0]["python_lines"]
        steps = [line for line in lines if "CartPoleEnv.step" in line["code"]]
        self.assertTrue(steps, lines)
        self.assertEqual({line["operation"] for line in steps}, {"custom_step"}, steps)

    def test_user_rules_extend_the_defaults(self):
        rules = os.path.join(scratch_dir(self), "mine.rules")
        with open(rules, "w") as f:
            f.write("operation learning  Agent.update\n")
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--quiet", "--rules", rules, "--out", out, "--", ARGS.python, LOOP, "200")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        operations = time_by(report, report["processes"][0]["pid"], "operation")
        # Default rules come first: Agent.update is already backprop.
        self.assertIn("backprop", operations)
        self.assertTrue(os.path.exists(os.path.join(out, "rules", "01-mine.rules")))

    def test_the_python_level_can_be_left_out(self):
        # RLSCOPE_PYTHON_HOOK=off: no Python time and no inferred operation,
        # the program's output the same, its process still traced.
        env = dict(os.environ, RLSCOPE_PYTHON_HOOK="off")
        run = ProfiledRun(self, [ARGS.python, LOOP, "100"], env=env)
        plain = subprocess.run([ARGS.python, LOOP, "100"], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.result.stdout, plain.stdout)
        (process,) = run.report["processes"]
        categories = time_by(run.report, process["pid"], "category")
        self.assertNotIn("Python", categories)
        self.assertGreater(sum(categories.values()), 0)
        operations = set(time_by(run.report, process["pid"], "operation"))
        self.assertFalse(operations & {"simulation", "inference", "replay", "backprop"}, operations)

    def test_bad_rules_file_is_refused_before_running(self):
        rules = os.path.join(scratch_dir(self), "bad.rules")
        with open(rules, "w") as f:
            f.write("# fine\noperation only-a-name\n")
        result = run_rlscope("run", "--rules", rules, "--", ARGS.python, "-c", "print(1)")
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"{rules}:2:", result.stderr)
        self.assertNotIn("1\n", result.stdout)


class ThreadsAndProcesses(unittest.TestCase):
    def test_threads_started_after_attach_are_hooked(self):
        run = ProfiledRun(self, [ARGS.python, LOOP, "50", "--thread"])
        (process,) = run.report["processes"]
        worker = [t for t in process["threads"] if t["name"] == "env-worker"]
        self.assertEqual(len(worker), 1, process["threads"])
        worker_ops = {row["operation"] for row in worker[0]["rows"]}
        self.assertIn("simulation", worker_ops)
        self.assertIn("Python", {row["category"] for row in worker[0]["rows"]})

    def test_fork_children_keep_the_hook(self):
        run = ProfiledRun(self, [ARGS.python, LOOP, "50", "--fork"])
        child = [p for p in run.report["processes"] if p["forked_from"] != 0]
        self.assertEqual(len(child), 1)
        self.assertGreater(time_of(run.report, child[0]["pid"], "simulation"), 0)
        # The child still runs Python: its base level is Python, not Native.
        self.assertGreater(time_by(run.report, child[0]["pid"], "category").get("Python", 0), 0)
        self.assertEqual(child[0]["problems"], [])

    def test_python_subprocesses_are_hooked(self):
        script = ("import subprocess, sys\n"
                  f"subprocess.run([sys.executable, {LOOP!r}, '30'], check=True)\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        loops = [p for p in run.report["processes"] if len(p["argv"]) > 1 and p["argv"][1].endswith("rl_loop.py")]
        self.assertEqual(len(loops), 1)
        self.assertGreater(time_of(run.report, loops[0]["pid"], "simulation"), 0)


class Robustness(unittest.TestCase):
    def test_interleaved_explicit_operations_close_their_own_blocks(self):
        # Two asyncio tasks whose with-blocks interleave: A works 0.1 s,
        # B 0.3 s. Closing by position would swap them.
        script = ("import asyncio, time, rlscope\n"
                  "async def task(name, work):\n"
                  "    with rlscope.operation(name):\n"
                  "        await asyncio.sleep(0.01)\n"
                  "        end = time.perf_counter() + work\n"
                  "        while time.perf_counter() < end:\n"
                  "            pass\n"
                  "        await asyncio.sleep(0.01)\n"
                  "async def main():\n"
                  "    await asyncio.gather(task('task_a', 0.1), task('task_b', 0.3))\n"
                  "asyncio.run(main())\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        pid = run.report["processes"][0]["pid"]
        a, b = time_of(run.report, pid, "task_a"), time_of(run.report, pid, "task_b")
        # Each block spans its own entry to exit; where both are open the
        # later-started one (B) wins, so B also gets A's work: ambiguous by
        # nature (nothing tells which task is running), but never swapped.
        self.assertGreater(a, 0)
        self.assertGreater(b, 0.3e9, (a, b))
        self.assertGreater(b, a, (a, b))

    def test_deep_recursion_leaves_no_operation_open(self):
        script = ("import sys, time\n"
                  "sys.setrecursionlimit(10000)\n"
                  "class Agent:\n"
                  "    def update(self, n):\n"
                  "        return self.update(n - 1) if n else 0\n"
                  "Agent().update(300)\n"
                  "end = time.perf_counter() + 0.3\n"
                  "while time.perf_counter() < end:\n"
                  "    pass\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        pid = run.report["processes"][0]["pid"]
        # The loop after the last operation is not backprop: it is teardown.
        self.assertLess(time_of(run.report, pid, "backprop"), 0.1e9)
        self.assertGreater(time_of(run.report, pid, "teardown"), 0.3e9)

    def test_another_profiler_replacing_the_hook_is_reported(self):
        script = ("import cProfile\n"
                  "profile = cProfile.Profile()\n"
                  "profile.enable()\n"
                  "sum(range(1000))\n"
                  "profile.disable()\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        problems = run.report["processes"][0]["problems"]
        # Under sys.monitoring (3.12+) the program's profiler runs beside
        # rlscope's tool and replaces nothing.
        replaced = any("replaced rlscope's Python hook" in p for p in problems)
        self.assertEqual(replaced, not uses_monitoring(), problems)

    def test_an_idle_python_thread_does_not_take_the_main_threads_operations(self):
        script = ("import threading, time\n"
                  "class ReplayBuffer:\n"
                  "    def add(self):\n"
                  "        end = time.perf_counter() + 0.2\n"
                  "        while time.perf_counter() < end:\n"
                  "            pass\n"
                  "idle = threading.Thread(target=time.sleep, args=(0.4,))\n"
                  "idle.start()\n"
                  "ReplayBuffer().add()\n"
                  "idle.join()\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        (process,) = run.report["processes"]
        idle = [t for t in process["threads"] if t["tid"] != process["pid"]]
        self.assertEqual(len(idle), 1)
        self.assertEqual({row["operation"] for row in idle[0]["rows"]}, {"(none)"})


class ProgramIsUnchanged(unittest.TestCase):
    def test_output_is_identical_with_and_without_rlscope(self):
        plain = subprocess.run([ARGS.python, LOOP, "300"], capture_output=True, text=True, check=True)
        run = ProfiledRun(self, [ARGS.python, LOOP, "300"])
        self.assertEqual(run.result.stdout, plain.stdout)

    def test_an_existing_sitecustomize_still_runs(self):
        site = scratch_dir(self)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.CHAINED = 'yes'\n")
        env = dict(os.environ, PYTHONPATH=site)
        run = ProfiledRun(self, [ARGS.python, "-c", "print(CHAINED)"], env=env)
        self.assertEqual(run.result.stdout, "yes\n")

    def test_import_sitecustomize_gives_the_shadowed_module(self):
        site = scratch_dir(self)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write("MARK = 'user'\n")
        env = dict(os.environ, PYTHONPATH=site)
        script = "from sitecustomize import MARK\nimport sitecustomize\nprint(MARK, sitecustomize.__file__)\n"
        run = ProfiledRun(self, [ARGS.python, "-c", script], env=env)
        self.assertEqual(run.result.stdout, f"user {os.path.join(site, 'sitecustomize.py')}\n", run.result.stderr)

    def test_import_sitecustomize_gives_what_it_gives_without_rlscope(self):
        # Debian's python3 has a sitecustomize of its own: the same module.
        script = ("try:\n"
                  "    import sitecustomize\n"
                  "    print(sitecustomize.__file__)\n"
                  "except ModuleNotFoundError as error:\n"
                  "    print('none', error.name)\n")
        plain = subprocess.run([ARGS.python, "-c", script], capture_output=True, text=True, check=True)
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        self.assertEqual(run.result.stdout, plain.stdout)
        # With no sitecustomize anywhere (site's step run by hand on a
        # path holding rlscope's alone): ModuleNotFoundError, as without it.
        alone = ("import ctypes, functools, importlib.machinery, importlib.util, os, site, sys, threading\n"
                 "sys.path[:] = [os.environ['PYTHONPATH']]\n"
                 "site.execsitecustomize()\n" + script)
        env = dict(os.environ, PYTHONPATH=os.path.join(ARGS.share, "python"))
        env.pop("RLSCOPE_SOCKET", None)
        result = subprocess.run([ARGS.python, "-S", "-c", alone], capture_output=True, text=True, env=env,
                                timeout=60)
        self.assertEqual((result.stdout, result.stderr), ("none sitecustomize\n", ""))

    def test_threading_profile_functions_are_the_programs_own(self):
        script = ("import sys, threading\n"
                  "print(threading.getprofile())\n"
                  "events = []\n"
                  "def mine(frame, event, arg):\n"
                  "    events.append(event)\n"
                  "threading.setprofile(mine)\n"
                  "worker = threading.Thread(target=sum, args=(range(10),))\n"
                  "worker.start()\n"
                  "worker.join()\n"
                  "print(threading.getprofile() is mine, 'c_call' in events)\n"
                  "seen = []\n"
                  "sys.setprofile(lambda frame, event, arg: seen.append(event))\n"
                  "len([])\n"
                  "sys.setprofile(None)\n"
                  "print('c_call' in seen)\n")
        plain = subprocess.run([ARGS.python, "-c", script], capture_output=True, text=True, check=True)
        self.assertEqual(plain.stdout, "None\nTrue True\nTrue\n")
        run = ProfiledRun(self, [ARGS.python, "-c", script])
        self.assertEqual(run.result.stdout, plain.stdout)
        # Where the program's own function took over, the report says so
        # (under sys.monitoring nothing is taken over).
        problems = run.report["processes"][0]["problems"]
        replaced = any("replaced rlscope's Python hook" in p for p in problems)
        self.assertEqual(replaced, not uses_monitoring(), problems)

    def test_the_rlscope_module_is_a_no_op_outside_rlscope(self):
        found = run_rlscope("python-path")
        self.assertEqual(found.returncode, 0, found.stderr)
        folder = found.stdout.strip()
        self.assertEqual(sorted(os.listdir(folder)), ["rlscope"])  # The module alone: no sitecustomize.py.
        env = dict(os.environ, PYTHONPATH=folder)
        env.pop("RLSCOPE_SOCKET", None)
        result = subprocess.run([ARGS.python, "-c", "import rlscope\nwith rlscope.operation('x'):\n    print('ok')"],
                                capture_output=True, text=True, env=env)
        self.assertEqual(result.stdout, "ok\n", result.stderr)
        self.assertEqual(result.stderr, "")


if __name__ == "__main__":
    main(extra_arguments=("--python", "--share"))
