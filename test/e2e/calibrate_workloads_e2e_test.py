#!/usr/bin/env python3
"""End-to-end tests of rlscope calibrate's micro-workloads
(calibration/workloads/): every workload lists its cases, runs each and
prints the one JSON line of the protocol; and under `rlscope run` each case
makes rlscope record exactly the events it claims to exercise (warm-up plus
timed iterations of them): simulator calls through a trampoline, NVTX ranges,
CUDA runtime calls, Python->native transitions and inferred operations.

  calibrate_workloads_e2e_test.py --rlscope BIN --native BIN --python-workload FILE
      --rules FILE --python INTERPRETER [--cuda BIN --fake-cuda-dir DIR] [unittest args]
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope, scratch_dir  # noqa: E402

N = 3000  # Small: no ring can fill, so every event is kept.
SIM_ALL = "*librlscope_calibrate_sim*:rlscope_calibrate_*"
SIM_INNER = "*librlscope_calibrate_sim*:rlscope_calibrate_inner"
CUDA_CASES = ["cudaGetDevice", "cudaLaunchKernel", "cudaMemsetAsync", "cudaMemcpyAsync", "cudaStreamSynchronize",
              "cudaEventRecord", "cuLaunchKernel"]
INTERPOSED = {"cudaLaunchKernel", "cudaMemsetAsync", "cudaMemcpyAsync", "cudaStreamSynchronize"}
EVENTS_PER_ITERATION = {
    "trampoline": 1, "trampoline_nested": 2, "nvtx_range": 2, "process": 0,
    "python_call": 1, "python_builtin": 1, "python_transition": 1, "python_operation": 2,
    **{case: 1 for case in CUDA_CASES},
}


def fake_cuda_env():
    return dict(os.environ, LD_LIBRARY_PATH=ARGS.fake_cuda_dir)


def workload(name, *args):
    """The command line of workload `name` ("native", "python", "cuda")."""
    if name == "python":
        return [ARGS.python, ARGS.python_workload, *args]
    return [ARGS.native if name == "native" else ARGS.cuda, *args]


def run(command, env=None):
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def warmup(n):
    return min(n // 10, 10000)


def events_by_name(run_dir):
    """{(kind, name): count} of every event of the run, from `rlscope dump`,
    and the total of events the preload dropped."""
    counts = collections.Counter()
    dropped = 0
    for trace in sorted(glob.glob(os.path.join(run_dir, "trace", "*.rlt"))):
        dump = run_rlscope("dump", trace)
        if dump.returncode != 0:
            raise AssertionError(dump.stderr)
        strings = {}
        events = []
        for line in dump.stdout.splitlines():
            fields = line.split()
            if fields[:1] == ["string"] and len(fields) >= 4:
                strings[int(fields[1])] = " ".join(fields[3:])
            elif len(fields) > 3 and "=" not in fields[0] and fields[3].startswith("dur="):
                values = dict(field.split("=", 1) for field in fields[3:] if "=" in field)
                events.append((fields[0], int(values["name"])))
            elif fields[1:2] == ["goodbye"]:
                values = dict(field.split("=", 1) for field in fields[2:] if "=" in field)
                dropped += int(values.get("dropped", 0))
        for kind, name in events:
            counts[(kind, strings.get(name, "") if name else "")] += 1
    return counts, dropped


class Protocol(unittest.TestCase):
    """--list, every listed case, the JSON line and the exit codes."""

    def check_line(self, result, case, iterations):
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 1, result.stdout)
        line = json.loads(lines[0])
        self.assertEqual(line["case"], case)
        self.assertEqual(line["iterations"], iterations)
        self.assertIsInstance(line["elapsed_ns"], int)
        self.assertGreaterEqual(line["elapsed_ns"], 0)
        if iterations > 0:
            self.assertGreater(line["elapsed_ns"], 0)
        self.assertEqual(line["events_per_iteration"], EVENTS_PER_ITERATION[case])
        self.assertEqual(line["warmup_iterations"], warmup(iterations))
        return line

    def run_every_case(self, name, env=None):
        listed = run(workload(name, "--list"), env=env)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        cases = listed.stdout.split()
        lines = {}
        for case in cases:
            iterations = 0 if case == "process" else N
            with self.subTest(workload=name, case=case):
                lines[case] = self.check_line(run(workload(name, "--case", case, "--iterations", str(iterations)),
                                                  env=env), case, iterations)
        return cases, lines

    def check_bursts(self, name, case, env=None):
        # 2500 iterations in bursts of 1000: 3 timed bursts.
        result = run(workload(name, "--case", case, "--iterations", "2500", "--burst", "1000", "--pause-ms", "1"),
                     env=env)
        line = self.check_line(result, case, 2500)
        self.assertEqual((line["burst"], line["bursts"], line["pause_ms"]), (1000, 3, 1), line)

    def check_usage_errors(self, name, env=None):
        self.assertEqual(run(workload(name, "--case", "no-such-case", "--iterations", "10"), env=env).returncode, 2)
        self.assertEqual(run(workload(name, "--bogus"), env=env).returncode, 2)
        self.assertEqual(run(workload(name, "--case", "process"), env=env).returncode, 2)

    def test_native(self):
        cases, lines = self.run_every_case("native")
        expected = ["trampoline", "trampoline_nested", "process"]
        if ARGS.cuda:  # NVTX comes with the CUDA toolkit.
            expected.insert(2, "nvtx_range")
        self.assertEqual(cases, expected)
        self.assertEqual(lines["trampoline_nested"]["nested"], 1)
        self.check_bursts("native", "trampoline")
        self.check_usage_errors("native")
        self.assertEqual(run(workload("native", "--case", "process", "--iterations", "5")).returncode, 2)

    def test_python(self):
        cases, lines = self.run_every_case("python")
        self.assertEqual(cases, ["python_call", "python_builtin", "python_transition", "python_operation", "process"])
        callee = lines["python_transition"]
        self.assertTrue(callee["callee_file"].endswith(".so"), callee)
        self.check_bursts("python", "python_call")
        self.check_usage_errors("python")
        self.assertEqual(run(workload("python", "--case", "process", "--iterations", "5")).returncode, 2)

    def test_cuda_on_the_fake_runtime(self):
        if not ARGS.cuda:
            self.skipTest("built without a CUDA toolkit")
        env = fake_cuda_env()
        info = run(workload("cuda", "--info"), env=env)
        self.assertEqual(info.returncode, 0, info.stderr)
        info = json.loads(info.stdout)
        self.assertEqual((info["runtime"], info["usable"], info["device_count"]), ("fake", True, 1), info)
        for field in ("runtime_version", "driver_version", "device"):
            self.assertIn(field, info)
        cases, lines = self.run_every_case("cuda", env=env)
        self.assertEqual(cases, CUDA_CASES)
        for case, line in lines.items():
            self.assertEqual(line["runtime"], "fake")
            self.assertEqual(line["interposed"], case in INTERPOSED, case)
            if "syncs" in line:  # Cases that queue GPU work drain it every sync_every iterations.
                self.assertEqual(line["syncs"], N // line["sync_every"])
                self.assertGreaterEqual(line["sync_ns"], 0)
        self.check_bursts("cuda", "cudaLaunchKernel", env=env)
        self.check_usage_errors("cuda", env=env)

    def test_cuda_binary_finds_the_runtime_through_the_loader(self):
        # No RPATH to the fake (NVIDIA's runtime must win on a GPU machine)
        # and versioned references, as a program built with nvcc has.
        if not ARGS.cuda:
            self.skipTest("built without a CUDA toolkit")
        readelf = shutil.which("readelf")
        if readelf is None:
            self.skipTest("no readelf")
        dynamic = run([readelf, "-d", ARGS.cuda]).stdout
        self.assertIn("Shared library: [libcudart.so.13]", dynamic)
        self.assertNotIn("RPATH", dynamic)
        self.assertNotIn("RUNPATH", dynamic)
        symbols = run([readelf, "-W", "--dyn-syms", ARGS.cuda]).stdout
        self.assertIn("cudaLaunchKernel@libcudart.so.13", symbols)


class UnderRlscope(unittest.TestCase):
    """Each case under `rlscope run`: the events it claims, warm-up + N of them."""

    def profile(self, command, options=(), env=None):
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--quiet", "--out", out, *options, "--", *command, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 1, result.stdout)  # The program's stdout is untouched.
        counts, dropped = events_by_name(out)
        self.assertEqual(dropped, 0)
        return json.loads(lines[0]), counts

    def calls(self, line):
        return line["warmup_iterations"] + line["iterations"]

    def test_trampoline(self):
        line, counts = self.profile(workload("native", "--case", "trampoline", "--iterations", str(N)),
                                    options=("--sim", SIM_ALL))
        self.assertEqual(counts[("simulator", "rlscope_calibrate_step")], self.calls(line))

    def test_trampoline_nested(self):
        command = workload("native", "--case", "trampoline_nested", "--iterations", str(N))
        line, counts = self.profile(command, options=("--sim", SIM_ALL))
        self.assertEqual(counts[("simulator", "rlscope_calibrate_outer")], self.calls(line))
        self.assertEqual(counts[("simulator", "rlscope_calibrate_inner")], 0)  # Nested: not recorded.
        # ...but hooked: alone, the inner call is recorded every time.
        line, counts = self.profile(command, options=("--sim", SIM_INNER))
        self.assertEqual(counts[("simulator", "rlscope_calibrate_inner")], self.calls(line))
        self.assertEqual(counts[("simulator", "rlscope_calibrate_outer")], 0)

    def test_trampoline_unhooked_without_sim(self):
        _, counts = self.profile(workload("native", "--case", "trampoline", "--iterations", str(N)))
        self.assertEqual(counts[("simulator", "rlscope_calibrate_step")], 0)

    def test_nvtx_range(self):
        if not ARGS.cuda:
            self.skipTest("built without a CUDA toolkit (no NVTX)")
        line, counts = self.profile(workload("native", "--case", "nvtx_range", "--iterations", str(N)))
        self.assertEqual(counts[("op_push", "rlscope-calibrate")], self.calls(line))
        self.assertEqual(counts[("op_pop", "")], self.calls(line))

    def test_cuda_launch_kernel(self):
        if not ARGS.cuda:
            self.skipTest("built without a CUDA toolkit")
        line, counts = self.profile(workload("cuda", "--case", "cudaLaunchKernel", "--iterations", str(N)),
                                    options=("--no-cupti",), env=fake_cuda_env())
        self.assertEqual(line["runtime"], "fake")
        self.assertEqual(counts[("cuda_api", "cudaLaunchKernel")], self.calls(line))
        self.assertEqual(counts[("cuda_api", "cudaStreamSynchronize")], line["syncs"] + warmup(N) // 1000)

    def test_cu_launch_kernel_is_seen_by_cupti_only(self):
        if not ARGS.cuda:
            self.skipTest("built without a CUDA toolkit")
        cupti = os.path.join(ARGS.fake_cuda_dir, "cupti", "libcupti.so.13")
        line, counts = self.profile(workload("cuda", "--case", "cuLaunchKernel", "--iterations", str(N)),
                                    options=("--cupti", cupti), env=fake_cuda_env())
        self.assertEqual(line["interposed"], False)
        # CUPTI's driver-API events (whatever `rlscope dump` calls their kind).
        by_cupti = sum(count for (kind, name), count in counts.items()
                       if name == "cuLaunchKernel" and kind != "cuda_api")
        self.assertEqual(by_cupti, self.calls(line))
        self.assertEqual(sum(count for (kind, _), count in counts.items() if kind == "cuda_api"),
                         counts[("cuda_api", "cudaStreamSynchronize")] + counts[("cuda_api", "cudaMalloc")] +
                         counts[("cuda_api", "cudaDeviceSynchronize")])  # No launch passed the interposer.

    def test_cuda_stream_synchronize(self):
        if not ARGS.cuda:
            self.skipTest("built without a CUDA toolkit")
        line, counts = self.profile(workload("cuda", "--case", "cudaStreamSynchronize", "--iterations", str(N)),
                                    options=("--no-cupti",), env=fake_cuda_env())
        self.assertEqual(counts[("cuda_api", "cudaStreamSynchronize")], self.calls(line))

    def test_python_transition(self):
        line, counts = self.profile(workload("python", "--case", "python_transition", "--iterations", str(N)))
        transitions = sum(count for (kind, name), count in counts.items()
                          if kind == "python_call" and name.startswith("loop_python_transition"))
        self.assertEqual(transitions, self.calls(line), line)

    def test_python_builtin_is_not_recorded(self):
        _, counts = self.profile(workload("python", "--case", "python_builtin", "--iterations", str(N)))
        recorded = [key for key in counts if key[0] == "python_call" and key[1].startswith("loop_python_builtin")]
        self.assertEqual(recorded, [])

    def test_python_operation(self):
        command = workload("python", "--case", "python_operation", "--iterations", str(N))
        line, counts = self.profile(command, options=("--rules", ARGS.rules))
        self.assertEqual(counts[("op_push", "calibrate")], self.calls(line))
        # Without the rules file, no operation.
        _, counts = self.profile(command)
        self.assertEqual(counts[("op_push", "calibrate")], 0)


if __name__ == "__main__":
    main(extra_arguments=("--native", "--python-workload", "--rules", "--python"),
         optional_arguments=("--cuda", "--fake-cuda-dir"))
