#!/usr/bin/python3
"""How often rlscope's inferred operations agree with a hand annotation.

For each program of the corpus (scripts/bench/inference_corpus/specs/*.json)
this makes a hand-annotated copy at run time: the spec names runs of complete
statements that get wrapped in `with rlscope.operation(OP):`. It profiles
that copy ONCE with `rlscope run`, exports the trace (`rlscope export
--chrome`), and compares, instant by instant on every thread, two timelines
of the same trace:
  - truth: the explicit operations (the annotation), innermost wins;
  - inferred: the operations rlscope inferred from the running Python code,
    innermost wins. rlscope records these whether or not an explicit
    operation is open (explicit ones only take precedence in the report), so
    one run gives both and the program's timing is the same for both.

Metric, per program, over the instants where the truth is an operation
other than "startup" (imports and set-up; the time before the annotation's
first block and instants no block covers, e.g. a `for` header or a
worker waiting for its next command, are not judged):
  agreement  share of that thread time the inferred view puts on the same
             operation as the truth;
  (none)     share of it the inferred view puts on no operation.
Goal: agreement >= 90 % and (none) <= 5 % on every program. XLA
compilation (truth from the jax_compile truth hook, see COMPILE) is not
judged either.

A spec's "requires" lists modules its program imports (jax, flax, ...):
where the interpreter lacks one, the program is skipped, as third-party
programs are without --sources; skipped programs are listed and do not
fail the exit status (1: a program missed the goal or could not run).

The inferred operations are those `rlscope export --chrome` writes: the
decoded timelines (report/timeline_builder.cc). An inference pass that ran
only later, inside the report's analysis, would not be measured here.

Usage:
  inference_accuracy.py run --rlscope BUILD/bin/rlscope [--sources DIR]
                            [--only NAME ...] [--keep DIR] [--markdown] [--explain]
  inference_accuracy.py prepare-sources --into DIR --cleanrl GIT_DIR
                            --gymnasium GIT_DIR --sb3 GIT_DIR
  inference_accuracy.py fill-hashes SPEC [--sources DIR]

Third-party programs (CleanRL, Stable-Baselines3 on Gymnasium) are never
part of this repository: `prepare-sources` extracts the pinned commits from
git directories you have (e.g. `git clone --mirror` of
github.com/vwxyzjn/cleanrl, github.com/Farama-Foundation/Gymnasium and
github.com/DLR-RM/stable-baselines3) into DIR, and `run --sources DIR` runs
them. Without --sources only our own programs run. They need Debian's
python3-cloudpickle, python3-pandas and python3-matplotlib
(inference_corpus/install_third_party_deps.sh).
"""
import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "inference_corpus")
SPECS = os.path.join(CORPUS, "specs")
STANDINS = os.path.join(CORPUS, "standins")
PYTHON = "/usr/bin/python3"  # Debian's torch imports only under this one.
STARTUP = "startup"
# XLA compilation has no statement of the program to annotate: its truth
# comes from the jax_compile truth hook (standins/run_with_standins.py),
# which wraps JAX's own compile entry point. That is the function
# rlscope's compile rule names too, so agreement there would hold by
# construction: compile time is not judged, only reported.
COMPILE = "compile"
NOT_JUDGED = (STARTUP, COMPILE)
NONE = "(none)"
SKIPPED = "skipped:"
GOAL_AGREEMENT = 0.90
GOAL_NONE = 0.05

# The commits third-party specs are pinned to: source name -> (directory
# under --sources, repository, ref, commit, paths to extract).
THIRD_PARTY = {
    "cleanrl": ("cleanrl", "vwxyzjn/cleanrl", "master", "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb",
                ["cleanrl", "cleanrl_utils"]),
    "gymnasium": ("gymnasium-0.29.1", "Farama-Foundation/Gymnasium", "v0.29.1", "7cf49527c945297f0bfeb89edab417d87819ab00", ["gymnasium"]),
    "sb3": ("stable-baselines3-2.3.2", "DLR-RM/stable-baselines3", "v2.3.2", "285e01f64aa8ba4bd15aa339c45876d56ed0c3b4", ["stable_baselines3"]),
}


class SpecError(Exception):
    """A spec that does not fit the sources it names: the message says what to do."""


# ---------------------------------------------------------------- annotation

def LineHash(lines):
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def _statement_run(tree, first_line, last_line):
    """The statements of one body that exactly span first_line..last_line, or None."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if not isinstance(stmt, ast.stmt) or _first_line(stmt) != first_line:
                    continue
                for j in range(i, len(body)):
                    if body[j].end_lineno == last_line:
                        return body[i:j + 1]
                    if body[j].end_lineno > last_line:
                        break  # A statement on the same line in a nested body may still fit.
    return None


def _first_line(stmt):
    decorators = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno] + [d.lineno for d in decorators])


def AnnotateSource(text, blocks, path):
    """`text` with each block wrapped in `with rlscope.operation(OP):`.
    Blocks are 1-based inclusive line ranges of complete statements of one
    body; nested blocks are allowed (the inner one wins where both are open)."""
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text, filename=path)
    for block in blocks:
        first, last = block["first_line"], block["last_line"]
        if not 1 <= first <= last <= len(lines):
            raise SpecError(f"{path}: block {first}-{last} is outside the file ({len(lines)} lines)")
        if "sha256" in block and LineHash(lines[first - 1:last]) != block["sha256"]:
            raise SpecError(f"{path}: lines {first}-{last} are not the ones the spec was written for "
                            "(sha256 differs): wrong commit of the sources, or the spec needs updating")
        if _statement_run(tree, first, last) is None:
            raise SpecError(f"{path}: lines {first}-{last} are not a run of complete statements of one body")
    ranges = sorted((b["first_line"], b["last_line"]) for b in blocks)
    if len(set(ranges)) != len(ranges):
        raise SpecError(f"{path}: two blocks span the same lines")
    # Inner (shorter) blocks first: an outer block then re-indents the inner
    # one's header with its body. start[n]: index of the first element that
    # belongs to original line n (a header inserted before it counts), own[n]:
    # index of line n itself.
    result = list(lines)
    start = [None] + list(range(len(lines)))
    own = [None] + list(range(len(lines)))
    for block in sorted(blocks, key=lambda b: b["last_line"] - b["first_line"]):
        first, last = block["first_line"], block["last_line"]
        begin, stop = start[first], own[last]
        for i in range(begin, stop + 1):
            if result[i].strip():
                result[i] = "    " + result[i]
        indent = len(lines[first - 1]) - len(lines[first - 1].lstrip(" "))
        result.insert(begin, " " * indent + f"with rlscope.operation({json.dumps(block['operation'])}):\n")
        for n in range(1, len(lines) + 1):
            if start[n] >= begin and n != first:
                start[n] += 1
            if own[n] >= begin:
                own[n] += 1
    annotated = "".join(result)
    # The import goes after a module docstring and __future__ imports.
    module = ast.parse(annotated)
    insert_after = 0
    for stmt in module.body:
        is_docstring = (stmt is module.body[0] and isinstance(stmt, ast.Expr)
                        and isinstance(getattr(stmt, "value", None), ast.Constant)
                        and isinstance(stmt.value.value, str))
        if is_docstring or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            insert_after = stmt.end_lineno
        else:
            break
    result_lines = annotated.splitlines(keepends=True)
    result_lines.insert(insert_after, "import rlscope  # noqa: E402  (added by inference_accuracy.py)\n")
    annotated = "".join(result_lines)
    ast.parse(annotated, filename=path)  # A spec that breaks the file fails here, not in the profiled run.
    return annotated


# --------------------------------------------------------------------- specs

def LoadSpecs(only=()):
    specs = []
    for name in sorted(os.listdir(SPECS)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(SPECS, name)) as f:
            spec = json.load(f)
        spec["name"] = name[:-len(".json")]
        if only and spec["name"] not in only:
            continue
        specs.append(spec)
    return specs


def SourceRoot(source, sources_dir):
    """The directory a spec's paths are relative to."""
    if source == "own":
        return os.path.join(CORPUS, "own")
    if not sources_dir:
        return None
    return os.path.join(sources_dir, THIRD_PARTY[source][0])


def PrepareWorkdir(spec, sources_dir, workdir):
    """Copies the spec's source trees into workdir, annotates the files the
    spec names there, and returns {source: copied root}."""
    roots = {}
    for source in [spec["source"]] + spec.get("also", []):
        root = SourceRoot(source, sources_dir)
        if root is None or not os.path.isdir(root):
            raise SpecError(f"{spec['name']}: needs the {source} sources under --sources "
                            f"(see `inference_accuracy.py prepare-sources --help`)")
        copy = os.path.join(workdir, os.path.basename(root))
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__", ".git"))
        roots[source] = copy
    for entry in spec["files"]:
        path = os.path.join(roots[entry.get("source", spec["source"])], entry["path"])
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if "sha256" in entry and hashlib.sha256(text.encode("utf-8")).hexdigest() != entry["sha256"]:
            raise SpecError(f"{spec['name']}: {entry['path']} is not the file the spec was written for "
                            f"(sha256 differs; the spec is pinned to {spec.get('commit', 'our corpus')})")
        with open(path, "w", encoding="utf-8") as f:
            f.write(AnnotateSource(text, entry["blocks"], entry["path"]))
    return roots


def FillHashes(spec_path, sources_dir):
    with open(spec_path) as f:
        spec = json.load(f)
    for entry in spec["files"]:
        root = SourceRoot(entry.get("source", spec["source"]), sources_dir)
        with open(os.path.join(root, entry["path"]), encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines(keepends=True)
        entry["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        for block in entry["blocks"]:
            block["sha256"] = LineHash(lines[block["first_line"] - 1:block["last_line"]])
        AnnotateSource(text, entry["blocks"], entry["path"])  # Checks the blocks.
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")


# ------------------------------------------------------------------- metric

def _flatten_innermost(intervals):
    """Disjoint [(begin, end, label)] from possibly nested ones: at each
    instant the interval that began last among those open wins."""
    points = sorted({p for b, e, _ in intervals for p in (b, e)})
    if not points:
        return []
    starts = sorted(range(len(intervals)), key=lambda i: intervals[i][0])
    open_ids, k, flat = [], 0, []
    for left, right in zip(points, points[1:]):
        while k < len(starts) and intervals[starts[k]][0] <= left:
            open_ids.append(starts[k])
            k += 1
        open_ids = [i for i in open_ids if intervals[i][1] > left]
        if not open_ids:
            continue
        best = max(open_ids, key=lambda i: (intervals[i][0], -intervals[i][1]))
        label = intervals[best][2]
        if flat and flat[-1][1] == left and flat[-1][2] == label:
            flat[-1] = (flat[-1][0], right, label)
        else:
            flat.append((left, right, label))
    return flat


def _overlay(truth, inferred):
    """Yields (begin, end, truth label, inferred label or NONE) over the truth's intervals."""
    j = 0
    for begin, end, label in truth:
        cursor = begin
        while j < len(inferred) and inferred[j][1] <= begin:
            j += 1
        k = j
        while cursor < end:
            if k < len(inferred) and inferred[k][0] <= cursor < inferred[k][1]:
                stop = min(end, inferred[k][1])
                yield cursor, stop, label, inferred[k][2]
                cursor = stop
                if stop == inferred[k][1]:
                    k += 1
            else:
                stop = min(end, inferred[k][0]) if k < len(inferred) else end
                if stop > cursor:
                    yield cursor, stop, label, NONE
                cursor = stop
                if k < len(inferred) and cursor >= inferred[k][1]:
                    k += 1


def ThreadOperations(chrome_trace):
    """{(pid, tid): (explicit intervals, inferred intervals)} in ns from a
    `rlscope export --chrome` trace."""
    threads = {}
    for event in chrome_trace["traceEvents"]:
        if event.get("ph") != "X" or event.get("cat") != "operation":
            continue
        begin = round(float(event["ts"]) * 1000)
        end = begin + round(float(event["dur"]) * 1000)
        explicit, inferred = threads.setdefault((event["pid"], event["tid"]), ([], []))
        (inferred if event.get("args", {}).get("inferred") else explicit).append((begin, end, event["name"]))
    return threads


def Agreement(chrome_trace):
    """The metric of one trace: {"judged_ns", "agreement", "none_share",
    "confusion": {truth: {inferred: ns}}, "threads", "blocks" (annotated
    blocks entered on judged threads)}."""
    confusion = {}
    judged_ns = agree_ns = none_ns = 0
    judged_threads = blocks = 0
    compile_ns = 0
    for explicit, inferred in ThreadOperations(chrome_trace).values():
        flat = _flatten_innermost(explicit)
        compile_ns += sum(end - begin for begin, end, label in flat if label == COMPILE)
        truth = [i for i in flat if i[2] not in NOT_JUDGED]
        if not truth:
            continue
        judged_threads += 1
        blocks += sum(1 for i in explicit if i[2] not in NOT_JUDGED)
        for begin, end, want, got in _overlay(truth, _flatten_innermost(inferred)):
            duration = end - begin
            judged_ns += duration
            agree_ns += duration if want == got else 0
            none_ns += duration if got == NONE else 0
            row = confusion.setdefault(want, {})
            row[got] = row.get(got, 0) + duration
    return {
        "judged_ns": judged_ns,
        "agreement": agree_ns / judged_ns if judged_ns else 0.0,
        "none_share": none_ns / judged_ns if judged_ns else 0.0,
        "confusion": confusion,
        "threads": judged_threads,
        "blocks": blocks,
        "compile_truth_ns": compile_ns,
    }


def Disagreements(chrome_trace, top=12):
    """Where the inferred view disagrees with the truth, by the code that
    ran there: [(ns, truth, inferred, where)], largest first, `where` the
    calling code and line of the native calls in the disagreeing stretches
    (`rlscope export --chrome`'s args), else "Python" (no native call)."""
    calls = {}
    for event in chrome_trace["traceEvents"]:
        location = event.get("args", {}).get("location") if event.get("ph") == "X" else None
        if location is not None and event.get("cat") != "operation":
            begin = round(float(event["ts"]) * 1000)
            calls.setdefault((event["pid"], event["tid"]), []).append(
                (begin, begin + round(float(event["dur"]) * 1000), f"{location} line {event['args'].get('line', 0)}"))
    tally = {}
    for thread, (explicit, inferred) in ThreadOperations(chrome_trace).items():
        truth = [i for i in _flatten_innermost(explicit) if i[2] not in NOT_JUDGED]
        thread_calls = sorted(calls.get(thread, []))
        k = 0
        for begin, end, want, got in _overlay(truth, _flatten_innermost(inferred)):
            if want == got:
                continue
            while k < len(thread_calls) and thread_calls[k][1] <= begin:
                k += 1
            covered = 0
            for call_begin, call_end, where in thread_calls[k:]:
                if call_begin >= end:
                    break
                overlap = min(end, call_end) - max(begin, call_begin)
                if overlap > 0:
                    covered += overlap
                    key = (want, got, where)
                    tally[key] = tally.get(key, 0) + overlap
            rest = max(0, end - begin - covered)
            if rest:
                tally[(want, got, "Python")] = tally.get((want, got, "Python"), 0) + rest
    ranked = sorted(tally.items(), key=lambda kv: -kv[1])[:top]
    return [(ns, want, got, where) for (want, got, where), ns in ranked]


def MeetsGoal(result, goal_agreement=GOAL_AGREEMENT, goal_none=GOAL_NONE):
    return result["judged_ns"] > 0 and result["agreement"] >= goal_agreement and result["none_share"] <= goal_none


# ---------------------------------------------------------------------- run

def MissingModules(spec, python=PYTHON):
    """The modules of the spec's "requires" that `python` cannot import."""
    required = spec.get("requires", [])
    if not required:
        return []
    probe = subprocess.run([python, "-c", "import importlib.util, sys\n"
                            "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))",
                            *required], capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        return required
    return probe.stdout.split()


def ProfileProgram(spec, rlscope, sources_dir, workdir, timeout=600, python=PYTHON):
    """Annotates, profiles and measures one program. Returns the metric
    plus "seconds" (wall time of the profiled run) and "report" (report.json)."""
    if spec.get("truth_hooks") and not spec.get("standins"):
        raise SpecError(f"{spec['name']}: truth_hooks are installed by standins/run_with_standins.py: "
                        f"set \"standins\": true")
    roots = PrepareWorkdir(spec, sources_dir, workdir)
    pythonpath = [roots[s] for s in [spec["source"]] + spec.get("also", [])] + [STANDINS]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(pythonpath + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("OMP_NUM_THREADS", "1")
    env["RLSCOPE_ACCURACY_TRUTH_HOOKS"] = ",".join(spec.get("truth_hooks", []))
    command = [python]
    if spec.get("standins"):
        command.append(os.path.join(STANDINS, "run_with_standins.py"))
    command += [arg.format(**roots) for arg in spec["command"]]
    out = os.path.join(workdir, "run")
    started = time.monotonic()
    result = subprocess.run([rlscope, "run", "--out", out, "--", *command], cwd=workdir, env=env,
                            capture_output=True, text=True, errors="replace", timeout=timeout)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        hint = ""
        if "ModuleNotFoundError" in result.stderr and spec["source"] != "own":
            hint = " (a module is missing: see inference_corpus/install_third_party_deps.sh)"
        raise RuntimeError(f"{spec['name']}: `rlscope run` exited {result.returncode}{hint}:\n"
                           f"{result.stderr[-3000:]}")
    trace_path = os.path.join(workdir, "trace.json")
    exported = subprocess.run([rlscope, "export", out, "--chrome", trace_path], capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    if exported.returncode not in (0, 3):
        raise RuntimeError(f"{spec['name']}: `rlscope export` exited {exported.returncode}: {exported.stderr}")
    with open(trace_path) as f:
        trace = json.load(f)
    metric = Agreement(trace)
    metric["disagreements"] = Disagreements(trace)
    if "jax_compile" in spec.get("truth_hooks", []) and metric["compile_truth_ns"] == 0:
        raise RuntimeError(f"{spec['name']}: the jax_compile truth hook saw no compilation: JAX's compile "
                           f"entry point (jax._src.compiler.compile_or_get_cached) is no longer the one it calls")
    with open(os.path.join(out, "report.json")) as f:
        metric["report"] = json.load(f)
    metric["total_thread_ns"] = sum(thread["end_ns"] - thread["begin_ns"] for process in metric["report"]["processes"]
                                    for thread in process["threads"])
    metric["seconds"] = seconds
    return metric


BLOCK_COST_PROBE = """import rlscope
with rlscope.operation("probe-outer"):
    for _ in range(20000):
        with rlscope.operation("probe"):
            pass
"""


def MeasureBlockCost(rlscope, workdir, python=PYTHON):
    """Mean ns an empty `with rlscope.operation()` block spends inside its
    own interval (the ctypes return of the push, the call of the pop) under
    `rlscope run` here. The inferred view cannot name that time unless an
    inferred operation encloses the block, so it bounds how much of a
    program's (none) share the annotation itself adds."""
    script = os.path.join(workdir, "block_cost_probe.py")
    with open(script, "w") as f:
        f.write(BLOCK_COST_PROBE)
    env = dict(os.environ, PYTHONPATH=STANDINS)
    out, trace_path = os.path.join(workdir, "probe-run"), os.path.join(workdir, "probe.json")
    subprocess.run([rlscope, "run", "--out", out, "--", python, script], env=env, capture_output=True, check=True,
                   timeout=600)
    subprocess.run([rlscope, "export", out, "--chrome", trace_path], capture_output=True, check=True, timeout=600)
    with open(trace_path) as f:
        durations = [float(e["dur"]) * 1000 for e in json.load(f)["traceEvents"]
                     if e.get("cat") == "operation" and e.get("name") == "probe"]
    durations.sort()
    return durations[len(durations) // 2] if durations else 0.0


def FormatConfusion(confusion):
    parts = []
    for want in sorted(confusion):
        row = confusion[want]
        total = sum(row.values())
        cells = ", ".join(f"{got} {ns / total:.0%}" for got, ns in sorted(row.items(), key=lambda kv: -kv[1]))
        parts.append(f"{want} {total / 1e9:.2f}s -> {cells}")
    return "; ".join(parts)


def RunCommand(args):
    args.rlscope = os.path.abspath(args.rlscope)
    specs = LoadSpecs(args.only)
    rows = []
    probe_dir = tempfile.mkdtemp(prefix="rlscope-accuracy-probe-")
    try:
        block_ns = MeasureBlockCost(args.rlscope, probe_dir, args.python)
    except (subprocess.SubprocessError, OSError) as error:
        print(f"could not measure the cost of an annotation block: {error}", file=sys.stderr)
        block_ns = 0.0
    finally:
        shutil.rmtree(probe_dir, True)
    print(f"an empty annotation block spends {block_ns:.0f} ns (median) inside its interval", file=sys.stderr)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    for spec in specs:
        if spec["source"] != "own" and not args.sources:
            rows.append((spec["name"], None, f"{SKIPPED} third-party, pass --sources DIR"))
            continue
        missing = MissingModules(spec, args.python)
        if missing:
            rows.append((spec["name"], None, f"{SKIPPED} {args.python} cannot import {', '.join(missing)}"))
            print(f"{spec['name']}: {rows[-1][2]}", file=sys.stderr, flush=True)
            continue
        workdir = tempfile.mkdtemp(prefix=f"rlscope-accuracy-{spec['name']}-", dir=args.keep or None)
        try:
            metric = ProfileProgram(spec, args.rlscope, args.sources, workdir, python=args.python)
            metric["annotation_share"] = metric["blocks"] * block_ns / metric["judged_ns"] if metric["judged_ns"] else 0
            rows.append((spec["name"], metric, ""))
        except (SpecError, RuntimeError, subprocess.TimeoutExpired, OSError) as error:
            rows.append((spec["name"], None, f"not run: {error}"))
        finally:
            if not args.keep:
                shutil.rmtree(workdir, True)
        name, metric, why = rows[-1]
        print(f"{name}: " + (f"agreement {metric['agreement']:.1%}, (none) {metric['none_share']:.1%}, "
                             f"{metric['judged_ns'] / 1e9:.2f} thread s judged" +
                             (f", {metric['compile_truth_ns'] / 1e9:.2f} s compiling (not judged)"
                              if metric["compile_truth_ns"] else "") +
                             f"; {FormatConfusion(metric['confusion'])}"
                             if metric else why), file=sys.stderr, flush=True)
        if metric and args.explain:
            for ns, want, got, where in metric["disagreements"]:
                print(f"  {ns / 1e6:8.1f} ms  {want} -> {got}  {where}", file=sys.stderr)
    print(FormatTable(rows, args.markdown))
    # A program that could not run here (no sources given, a module this
    # interpreter lacks) is listed, not failed; one that broke fails.
    skipped = [name for name, metric, why in rows if metric is None and why.startswith(SKIPPED)]
    if skipped:
        print(f"skipped here: {', '.join(skipped)}", file=sys.stderr)
    return 0 if all(MeetsGoal(m) if m is not None else why.startswith(SKIPPED) for _, m, why in rows) else 1


def FormatTable(rows, markdown):
    header = ["program", "agreement", "(none)", "annotation <=", "judged thread s", "total thread s", "goal",
              "per truth operation: where inferred put it"]
    lines = []
    for name, metric, why in rows:
        if metric is None:
            lines.append([name, "-", "-", "-", "-", "-", "-", why.replace("\n", " ")[:300]])
        else:
            compiling = metric.get("compile_truth_ns", 0)
            lines.append([name, f"{metric['agreement']:.1%}", f"{metric['none_share']:.1%}",
                          f"{metric.get('annotation_share', 0):.1%}", f"{metric['judged_ns'] / 1e9:.2f}",
                          f"{metric['total_thread_ns'] / 1e9:.2f}", "met" if MeetsGoal(metric) else "missed",
                          (f"(compiling {compiling / 1e9:.2f} s, not judged) " if compiling else "")
                          + FormatConfusion(metric["confusion"])])
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(cells) + " |" for cells in lines]
        return "\n".join(out)
    widths = [max(len(r[i]) for r in [header] + lines) for i in range(len(header) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1] for r in [header] + lines)


def PrepareSources(args):
    gits = {"cleanrl": args.cleanrl, "gymnasium": args.gymnasium, "sb3": args.sb3}
    for source, (directory, repo, ref, commit, paths) in THIRD_PARTY.items():
        if not gits[source]:
            continue
        target = os.path.join(args.into, directory)
        os.makedirs(target, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", gits[source], "archive", commit or ref, *paths],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
        print(f"{repo} {commit or ref} -> {target}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="profile the corpus and print the table")
    run.add_argument("--rlscope", required=True, help="the rlscope executable (BUILD/bin/rlscope)")
    run.add_argument("--python", default=PYTHON,
                     help=f"the interpreter that runs the programs, with torch and numpy (default {PYTHON})")
    run.add_argument("--sources", default="", help="folder made by prepare-sources (third-party programs)")
    run.add_argument("--only", nargs="*", default=(), help="program names (spec file names without .json)")
    run.add_argument("--keep", default="", help="keep each program's run directory and trace under this folder")
    run.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    run.add_argument("--explain", action="store_true",
                     help="after each program, print where inference disagrees: truth -> inferred, by the calling "
                          "code and line of the native calls there")
    prepare = sub.add_parser("prepare-sources", help="extract the pinned third-party commits into a folder")
    prepare.add_argument("--into", required=True)
    for name in ("--cleanrl", "--gymnasium", "--sb3"):
        prepare.add_argument(name, default="", help="a git directory (e.g. a mirror clone) of that project")
    fill = sub.add_parser("fill-hashes", help="record the sha256 of a spec's files and blocks (after editing it)")
    fill.add_argument("spec")
    fill.add_argument("--sources", default="")
    args = parser.parse_args(argv)
    if args.command == "run":
        return RunCommand(args)
    if args.command == "prepare-sources":
        return PrepareSources(args)
    FillHashes(args.spec, args.sources)
    return 0


if __name__ == "__main__":
    sys.exit(main())
