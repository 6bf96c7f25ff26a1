#!/usr/bin/env python3
"""Checks that the source folders include one another only downwards:

  format/       what both sides share: the wire format, trace reader, rules
                parser, code origin, file I/O, run-directory names
  preload/      the injected library (the hot path)
  calibration/  the cost model and its verdict
  report/       analysis and reports
  collector/    the CLI: may include everything

Each folder may include headers of the folders listed for it in ALLOWED and
its own; nothing includes collector/ (the commands). Includes are written
from the source root ("report/run_report.h"), so a reader can tell where a
header lives: a bare include of one of these folders' headers is refused.

  check_layers.py [ROOT]        check the tree (default: this repository)
  check_layers.py --self-test   check that a tree with a violation fails
"""
import os
import re
import sys
import tempfile

ALLOWED = {
    "format": set(),
    "preload": {"format"},
    # preload/ for workloads/calibrate_cuda.cc: cuda_runtime_api_list.h.
    "calibration": {"format", "preload"},
    "report": {"calibration", "format"},
    # preload/: cuda_runtime_api_list.h, the list of what it interposes.
    "collector": {"calibration", "format", "preload", "report"},
}
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def sources(root, folder):
    for directory, _, names in os.walk(os.path.join(root, folder)):
        for name in sorted(names):
            if name.endswith((".h", ".cc")):
                yield os.path.join(directory, name)


def problems(root):
    """Every violation in the tree at `root`, as lines for people."""
    found = []
    folder_of = {}  # Header name -> its folder, for the message about a bare include.
    for folder in ALLOWED:
        for path in sources(root, folder):
            if path.endswith(".h"):
                folder_of.setdefault(os.path.basename(path), os.path.relpath(os.path.dirname(path), root))
    for folder, allowed in ALLOWED.items():
        for path in sources(root, folder):
            with open(path, errors="replace") as lines:
                for number, line in enumerate(lines, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    included = match.group(1)
                    where = f"{os.path.relpath(path, root)}:{number}"
                    if "/" not in included:
                        if included in folder_of:
                            found.append(f"{where}: includes {included} by its bare name: write it from the source "
                                         f"root, \"{folder_of[included]}/{included}\"")
                        continue
                    top = included.split("/")[0]
                    if top in ALLOWED and top != folder and top not in allowed:
                        found.append(f"{where}: includes {included} from {top}/, which {folder}/ may not (it may: "
                                     f"{', '.join(sorted(allowed)) or 'nothing else'})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        write("collector/run_command.h", "")
        write("report/breakdown.h", '#include "report/breakdown.h"\n')
        write("format/trace_reader.h", "")
        write("report/run_report.cc", '#include "format/trace_reader.h"\n#include "generated_schema.h"\n')
        if problems(root):
            print("self-test: a clean tree was refused: " + "; ".join(problems(root)))
            return 1
        write("report/bad.cc", '#include <vector>\n#include "collector/run_command.h"\n#include "breakdown.h"\n')
        found = problems(root)
        wanted = ["report/bad.cc:2: includes collector/run_command.h from collector/",
                  'report/bad.cc:3: includes breakdown.h by its bare name: write it from the source root, '
                  '"report/breakdown.h"']
        missing = [w for w in wanted if not any(w in line for line in found)]
        if missing:
            print("self-test: not found: " + "; ".join(missing) + " in: " + "; ".join(found))
            return 1
    print("self-test: a clean tree passes, an upward include and a bare include fail")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = problems(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the layers (scripts/check_layers.py)")
        return 1
    print("includes follow the layers: " + ", ".join(f"{k} -> {'/'.join(sorted(v)) or '-'}"
                                                     for k, v in ALLOWED.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
