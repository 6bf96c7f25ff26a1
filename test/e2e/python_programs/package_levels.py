"""Calls one C function of copies of an extension module installed in a
fake layout, so its level comes from where the copy lives, and runs code
whose operation comes from where its source file lives.

  package_levels.py EXT FUNCTION LABEL=SO... -- PY...

Each LABEL=SO loads the copy SO of extension module EXT and calls FUNCTION
inside the explicit operation LABEL. Each PY is a source file defining
run(f): it is loaded from its path and given the first copy's FUNCTION.
"""
import importlib.machinery
import importlib.util
import sys

import rlscope

CALLS = 2000


def load(name, path, loader_class):
    loader = loader_class(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def main():
    ext, function = sys.argv[1], sys.argv[2]
    copies, sources = sys.argv[3:], []
    if "--" in copies:
        at = copies.index("--")
        copies, sources = copies[:at], copies[at + 1:]
    first = None
    for argument in copies:
        label, path = argument.split("=", 1)
        call = getattr(load(ext, path, importlib.machinery.ExtensionFileLoader), function)
        first = first or call
        with rlscope.operation(label):
            for _ in range(CALLS):
                call()
    for index, path in enumerate(sources):
        load(f"package_levels_source_{index}", path, importlib.machinery.SourceFileLoader).run(first)
    print("done")


if __name__ == "__main__":
    main()
