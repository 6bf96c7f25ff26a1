"""Runs a script with stand-ins for modules Debian does not package,
without changing the script: `run_with_standins.py SCRIPT ARGS...`.

torch.utils.tensorboard (Debian's torch has no tensorboard) is served by a
meta-path finder from summary_writer_standin.py, whose SummaryWriter keeps
the real one's shape: the caller queues events and a background writer
thread sleeps on the queue and writes them to a file. tyro and
farama_notifications come from this folder on PYTHONPATH. The script runs
under run_name '__main__' with sys.argv as it would see it."""
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


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: run_with_standins.py SCRIPT [ARGS...]")
    sys.meta_path.insert(0, _StandinFinder())
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script] + sys.argv[2:]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
