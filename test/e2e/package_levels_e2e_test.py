#!/usr/bin/env python3
"""End-to-end tests of stack levels and operations by installed package: a
copy of one extension module is Native under site-packages/numpy/ even in a
virtualenv whose prefix holds "torch", Backend under site-packages/torch/,
and under the shared site-packages/nvidia/ folder as its distribution's
RECORD says; code in a user's own torch/optim/ or gym/ folder is not taken
for torch's optimizers or Gym's environments.

  package_levels_e2e_test.py --rlscope BIN --python PYTHON [unittest args]
"""
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, scratch_dir  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "package_levels.py")

# Standard extension modules with a C function that takes no argument: the
# first one the interpreter has as a shared object is copied around.
CANDIDATES = (("resource", "getpagesize"), ("_uuid", "generate_time_safe"), ("_contextvars", "copy_context"))

SOURCE = """\
class {cls}:
    def {method}(self, call):
        for _ in range(500):
            call()


def run(call):
    {cls}().{method}(call)
"""

FUNCTION_SOURCE = """\
def {function}(call):
    for _ in range(500):
        call()


def run(call):
    {function}(call)
"""


def find_extension(python):
    script = ("import importlib, sys\n"
              f"for name, function in {CANDIDATES!r}:\n"
              "    try:\n"
              "        module = importlib.import_module(name)\n"
              "    except ImportError:\n"
              "        continue\n"
              "    path = getattr(module, '__file__', None) or ''\n"
              "    if path.endswith('.so'):\n"
              "        print(name, function, path)\n"
              "        break\n")
    result = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=60)
    words = result.stdout.split()
    return words if len(words) == 3 else None


def place(root, relative, source):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copyfile(source, path)
    return path


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def category_ns(report, operation):
    totals = {}
    for row in report["rows"]:
        if row["operation"] == operation:
            totals[row["category"]] = totals.get(row["category"], 0) + row["ns"]
    return totals


class PackageLevels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        found = find_extension(ARGS.python)
        if found is None:
            raise unittest.SkipTest(f"{ARGS.python} has none of {CANDIDATES} as a shared object")
        cls.ext, cls.function, cls.so = found

    def profile(self, copies, sources=()):
        command = [ARGS.python, PROGRAM, self.ext, self.function, *copies]
        if sources:
            command += ["--", *sources]
        return ProfiledRun(self, command).report

    def test_level_follows_the_package_not_the_prefix(self):
        root = scratch_dir(self)
        name = os.path.basename(self.so)
        # A virtualenv under a folder named torch (like /opt/torch/.venv).
        venv = os.path.join(root, "torch", ".venv", "lib", "python3.11", "site-packages")
        numpy_copy = place(venv, f"numpy/core/{name}", self.so)
        torch_copy = place(os.path.join(root, "venv", "lib", "python3.11", "site-packages"), f"torch/lib/{name}",
                           self.so)
        report = self.profile([f"numpy_copy={numpy_copy}", f"torch_copy={torch_copy}"])
        numpy_levels, torch_levels = category_ns(report, "numpy_copy"), category_ns(report, "torch_copy")
        self.assertGreater(numpy_levels.get("Native", 0), 0, numpy_levels)
        self.assertEqual(numpy_levels.get("Backend", 0), 0, numpy_levels)
        self.assertGreater(torch_levels.get("Backend", 0), 0, torch_levels)

    def test_the_record_file_tells_whose_file_a_shared_folder_holds(self):
        # nvidia-* wheels all install under site-packages/nvidia/: cuDNN's
        # distribution is an ML backend's, DALI's (a data loader) is not.
        site = os.path.join(scratch_dir(self), "env", "lib", "python3.11", "site-packages")
        name = os.path.basename(self.so)
        cudnn = place(site, f"nvidia/cudnn/lib/{name}", self.so)
        dali = place(site, f"nvidia/dali/{name}", self.so)
        write(site, "nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
              f"nvidia/cudnn/__init__.py,,\nnvidia/cudnn/lib/{name},sha256=x,1\n"
              "nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD,,\n")
        write(site, "nvidia_dali_cuda120-1.40.0.dist-info/RECORD", f'"nvidia/dali/{name}",sha256=y,2\n')
        write(site, "broken-1.0.dist-info/RECORD", "\x00\xff,\n\"unterminated\n")
        report = self.profile([f"cudnn={cudnn}", f"dali={dali}"])
        cudnn_levels, dali_levels = category_ns(report, "cudnn"), category_ns(report, "dali")
        self.assertGreater(cudnn_levels.get("Backend", 0), 0, cudnn_levels)
        self.assertGreater(dali_levels.get("Native", 0), 0, dali_levels)
        self.assertEqual(dali_levels.get("Backend", 0), 0, dali_levels)

    def test_operations_follow_the_module_not_the_folder_name(self):
        # torch's backward is found by its module (torch.autograd), which
        # follows the package's layout, not a folder's name: the user's own
        # project/torch/autograd/__init__.py is not torch's.
        root = scratch_dir(self)
        site = os.path.join(root, "env", "lib", "python3.11", "site-packages")
        native = place(site, f"numpy/{os.path.basename(self.so)}", self.so)
        sources = [
            write(site, "torch/autograd/__init__.py", FUNCTION_SOURCE.format(function="backward")),
            write(root, "project/torch/autograd/__init__.py", FUNCTION_SOURCE.format(function="backward")),
        ]
        report = self.profile([f"load={native}"], sources)
        # The calling lines: the innermost code, which is the operation rule's.
        lines = [line for process in report["processes"] for line in process["python_library_lines"]]

        def operation_of(folder):
            found = {line["operation"] for line in lines if f"{folder}/torch/autograd/__init__.py" in line["code"]}
            self.assertEqual(len(found), 1, (folder, lines))
            return found.pop()

        self.assertEqual(operation_of("site-packages"), "backprop")
        self.assertNotEqual(operation_of("project"), "backprop")


if __name__ == "__main__":
    main(extra_arguments=["--python"])
