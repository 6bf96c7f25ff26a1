#!/usr/bin/env python3
"""The preload starts up in one explicit order, whatever the link order:

- its .init_array holds one function of ours, StartPreload (which calls
  every part's start-up in a fixed sequence), besides the C runtime's own;
- no translation unit has a dynamic initializer (_GLOBAL__sub_I_*): the
  order of those across objects is the link order, which the CMake
  generator decides (Ninja and Makefiles differ), and one of them running
  after StartPreload once wiped the simulator rules it had just installed;
- there is no legacy .ctors section.

  init_order_test.py PRELOAD
"""
import re
import subprocess
import sys

# crtbegin.o's entry (GCC and clang link the same one on Linux).
C_RUNTIME = {"frame_dummy"}
OURS = "StartPreload"


def run(*command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def sections(library):
    found = {}
    for line in run("readelf", "-SW", library).splitlines():
        match = re.search(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if match:
            found[match.group(1)] = (int(match.group(2), 16), int(match.group(3), 16))
    return found


def symbols_by_address(library):
    names = {}
    for line in run("nm", "-C", library).splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[1] in "tT":
            names.setdefault(int(fields[0], 16), fields[2])
    return names


def init_array_targets(library, begin, size):
    """The functions .init_array points at: in a shared library each entry
    is an R_X86_64_RELATIVE (or R_AARCH64_RELATIVE) relocation whose addend
    is the function's address."""
    targets = {}
    for line in run("readelf", "-rW", library).splitlines():
        fields = line.split()
        if len(fields) < 4 or not re.fullmatch(r"[0-9a-f]+", fields[0]) or "RELATIVE" not in fields[2]:
            continue
        offset = int(fields[0], 16)
        if begin <= offset < begin + size:
            targets[offset] = int(fields[-1], 16)
    return [targets.get(offset) for offset in range(begin, begin + size, 8)]


def main():
    library = sys.argv[1]
    failures = []
    names = symbols_by_address(library)
    dynamic_initializers = sorted(name for name in names.values() if name.startswith("_GLOBAL__sub_I_"))
    for name in dynamic_initializers:
        failures.append(f"{name}: a dynamic initializer (make the variable constinit, or set it up from "
                        "StartPreload's sequence)")
    found = sections(library)
    if found.get(".ctors", (0, 0))[1] > 0:
        failures.append("a .ctors section: constructors outside .init_array")
    begin, size = found.get(".init_array", (0, 0))
    entries = init_array_targets(library, begin, size)
    described = [names.get(address, hex(address) if address is not None else "?") for address in entries]
    ours = [name for name in described if name not in C_RUNTIME]
    if [name.rsplit("::", 1)[-1].split("(")[0] for name in ours] != [OURS]:
        failures.append(f".init_array runs {described}: expected the C runtime's entries and {OURS} alone")
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print(f"ok: .init_array = {described}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
