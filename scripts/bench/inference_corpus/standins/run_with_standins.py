"""Runs a script with stand-ins for modules Debian does not package,
without changing the script: `run_with_standins.py SCRIPT ARGS...`.

torch.utils.tensorboard (Debian's torch has no tensorboard) is served by a
meta-path finder from summary_writer_standin.py, whose SummaryWriter keeps
the real one's shape: the caller queues events and a background writer
thread sleeps on the queue and writes them to a file. tyro and
farama_notifications come from this folder on PYTHONPATH. The script runs
under run_name '__main__' with sys.argv as it would see it.

RLSCOPE_ACCURACY_TRUTH_HOOKS (comma-separated, set by inference_accuracy.py
from a spec's "truth_hooks") names ground truth that no statement of the
script can carry, installed before the script runs:
  jax_compile  XLA compilation: JAX's compile entry point runs inside
               rlscope.operation("compile") (inference_accuracy.py does
               not judge that time; it keeps it out of the operations
               that are judged)."""
import importlib.abc
import importlib.util
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class _StandinFinder(importlib.abc.MetaPathFinder):
    MODULES = {"torch.utils.tensorboard": os.path.join(HERE, "summary_writer_standin.py")}

    def find_spec(self, fullname, path, target=None):
        if fullname in self.MODULES:
            return importlib.util.spec_from_file_location(fullname, self.MODULES[fullname])
        return None


def _compile_in_truth():
    """Wraps jax._src.compiler.compile_or_get_cached, which JAX's pxla calls
    through the module (so the wrapper is what it calls) for every
    compilation, cache hits included, in an explicit "compile" operation."""
    import rlscope
    from jax._src import compiler

    compile_or_get_cached = compiler.compile_or_get_cached

    def compile_in_truth(*args, **kwargs):
        with rlscope.operation("compile"):
            return compile_or_get_cached(*args, **kwargs)

    compiler.compile_or_get_cached = compile_in_truth


TRUTH_HOOKS = {"jax_compile": _compile_in_truth}


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: run_with_standins.py SCRIPT [ARGS...]")
    for name in filter(None, os.environ.get("RLSCOPE_ACCURACY_TRUTH_HOOKS", "").split(",")):
        if name not in TRUTH_HOOKS:
            raise SystemExit(f"run_with_standins.py: unknown truth hook {name!r} (known: {', '.join(TRUTH_HOOKS)})")
        TRUTH_HOOKS[name]()
    sys.meta_path.insert(0, _StandinFinder())
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script] + sys.argv[2:]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
