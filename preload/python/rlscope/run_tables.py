"""rlscope.load: a profiled run's report.json as tables, for notebooks.

Imports nothing until load() is called (a program that imports rlscope
for rlscope.operation must not pay for it): json then, pandas only if
installed.
"""
import os

# Tables that exist even when the run has no row of them (no GPU work, no
# Python lines), so that code written against one run works on another.
_KNOWN_TABLES = (
    "rows", "uncorrected_rows", "processes", "threads", "threads.rows", "transitions", "python_lines",
    "python_library_lines", "instance_stats", "unmatched", "unmatched.functions", "gpu", "gpu.operations",
    "gpu.apis", "gpu.by_launch", "gpu.kernels_by_launch", "gpu.lines",
)

# Fields that identify a row to the tables nested in it.
_KEY_FIELDS = ("pid", "tid")


class RunTables(dict):
    """The tables of one report: {name: table}, also as attributes where the
    name allows (tables.rows, tables.python_lines). `report` is the parsed
    report.json itself; `path` the file it was read from."""

    def __init__(self, tables, report, path):
        super().__init__(tables)
        self.report = report
        self.path = path

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError("no table %r in %s (tables: %s)" % (name, self.path, ", ".join(sorted(self))))


def _is_table(value):
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _collect(obj, name, context, tables):
    """Adds `obj` (a dict) as one row of table `name` (its scalar fields and
    lists of scalars, plus the identifying fields of the rows it lies in),
    and its nested objects and lists of objects as tables of their own."""
    row = dict(context)
    nested = []
    for key, value in obj.items():
        child = key if not name or name in ("processes", "run") else name + "." + key
        if _is_table(value) and (value or child in _KNOWN_TABLES):
            nested.append((child, value))
        elif isinstance(value, dict):
            nested.append((child, [value]))
        else:
            row[key] = value
    if name:
        tables.setdefault(name, []).append(row)
    inner = dict(context)
    inner.update((key, obj[key]) for key in _KEY_FIELDS if key in obj and not isinstance(obj[key], (dict, list)))
    for child, items in nested:
        tables.setdefault(child, [])
        for item in items:
            _collect(item, child, inner, tables)


def _report_path(run_dir):
    path = os.fspath(run_dir)
    if os.path.isfile(path):
        return path
    if not os.path.isdir(path):
        raise FileNotFoundError("no run directory %s: profile into it with `rlscope run --out %s -- COMMAND`"
                                % (path, path))
    report = os.path.join(path, "report.json")
    if not os.path.isfile(report):
        raise FileNotFoundError("no report.json in %s: make it with `rlscope report %s` (or profile with "
                                "`rlscope run --out %s -- COMMAND`)" % (path, path, path))
    return report


def load(run_dir, pandas=None):
    """Reads RUN_DIR/report.json (made by `rlscope run --out RUN_DIR` or
    `rlscope report RUN_DIR`; a path to a report.json works too) and returns
    its tables as a RunTables: a dict of table name -> pandas DataFrame, or
    -> list of dicts (one per row) when pandas is not installed or
    `pandas=False`. Every list of objects in report.json is a table:

      rows, uncorrected_rows   the breakdown (process, operation, resource,
                               category, ns); uncorrected_rows only in a
                               corrected report
      run                      one row: command, wall_ns, corrected, ...
      processes                one row per process (pid, argv, ...)
      threads, threads.rows    per thread (pid, tid, ...) and its rows
      transitions, python_lines, python_library_lines, instance_stats,
      unmatched, unmatched.functions, gpu, gpu.operations, gpu.apis,
      gpu.by_launch, gpu.kernels_by_launch, gpu.lines
                               per process, each row with its "pid"
      correction, headline, nvidia_smi.gpus, ...   the rest, by path

    A table nested in a process (or thread) has that row's pid (and tid)
    as columns. Tables named above exist even when empty. The parsed JSON
    is `.report`.

    Raises FileNotFoundError when there is no run directory or report.json
    (naming the path and the command that makes it), ValueError when
    report.json is not a report."""
    import json

    path = _report_path(run_dir)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            report = json.load(f)
    except json.JSONDecodeError as error:
        raise ValueError("%s is not valid JSON (%s): remake it with `rlscope report DIR`" % (path, error)) from None
    if not isinstance(report, dict) or not str(report.get("schema", "")).startswith("rlscope.report/"):
        raise ValueError("%s is not an rlscope report (no \"schema\": \"rlscope.report/N\")" % path)
    tables = {}
    for name in _KNOWN_TABLES:
        tables[name] = []
    _collect(report, "run", {}, tables)
    if pandas is not False:
        try:
            import pandas as pd
        except ImportError:
            if pandas:
                raise
            pd = None
        if pd is not None:
            tables = {name: pd.DataFrame(rows) for name, rows in tables.items()}
    return RunTables(tables, report, path)
