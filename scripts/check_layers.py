#!/usr/bin/env python3
"""Checks that the source folders include one another only downwards:

  format/       the wire format, trace reader, run-directory names
  preload/      the injected library (the hot path)
  calibration/  the cost model and its verdict
  report/       analysis and reports
  collector/    the CLI: may include everything

Each folder may include headers of the folders listed for it in ALLOWED and
its own; nothing includes collector/ (the commands), and no header name is
used by two folders (includes are by name: a reader must be able to tell
where `rule_file.h` lives).

  check_layers.py [ROOT]        check the tree (default: this repository)
  check_layers.py --self-test   check that a tree with a violation fails
"""
import os
import re
import sys
import tempfile

ALLOWED = {
    # input_file.h: the preload's bounded, no-follow file reader.
    "format": {"preload"},
    "preload": {"format"},
    "calibration": {"format", "preload"},
    "report": {"calibration", "format", "preload"},
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
    owner = {}
    for folder in ALLOWED:
        for path in sources(root, folder):
            if not path.endswith(".h"):
                continue
            name = os.path.basename(path)
            if name in owner and owner[name] != folder:
                found.append(f"{name} is a header of both {owner[name]}/ and {folder}/: rename one")
            owner.setdefault(name, folder)
    for folder, allowed in ALLOWED.items():
        for path in sources(root, folder):
            with open(path, errors="replace") as lines:
                for number, line in enumerate(lines, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    included = owner.get(os.path.basename(match.group(1)))
                    if included is not None and included != folder and included not in allowed:
                        found.append(f"{os.path.relpath(path, root)}:{number}: includes {match.group(1)} from "
                                     f"{included}/, which {folder}/ may not (it may: "
                                     f"{', '.join(sorted(allowed)) or 'nothing else'})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        write("collector/run_command.h", "")
        write("report/breakdown.h", '#include "breakdown.h"\n')
        write("format/trace_reader.h", "")
        write("report/run_report.cc", '#include "trace_reader.h"\n')
        if problems(root):
            print("self-test: a clean tree was refused: " + "; ".join(problems(root)))
            return 1
        write("report/bad.cc", '#include <vector>\n#include "run_command.h"\n')
        write("preload/breakdown.h", "")
        found = problems(root)
        wanted = ["report/bad.cc:2: includes run_command.h from collector/", "breakdown.h is a header of both"]
        missing = [w for w in wanted if not any(w in line for line in found)]
        if missing:
            print("self-test: not found: " + "; ".join(missing) + " in: " + "; ".join(found))
            return 1
    print("self-test: a clean tree passes, an upward include and a shared header name fail")
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
