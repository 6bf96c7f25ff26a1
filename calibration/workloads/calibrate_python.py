#!/usr/bin/env python3
"""rlscope's Python micro-workloads for `rlscope calibrate`: each case makes
one kind of call in a timed loop, run with and without profiling to price
what rlscope's Python hook does for it (README.md next to this file).
Standard library only; CPython 3.11 to 3.13.

  calibrate_python.py --case NAME --iterations N [--burst B [--pause-ms P]]
                                                   time N iterations, print one JSON line
  calibrate_python.py --list                       the cases this interpreter can run

Cases (the hook of preload/python_hook.cc: the C-level profile function, or
on 3.12+ a sys.monitoring tool):
  python_call_site   3.12+: a call of a standard-library Python function
                     (copy._copy_immutable, `return x`): sys.monitoring's CALL
                     event at the call site; its start and return are
                     disabled after the first (no rule, not the user's code)
  python_call        a small Python function (about 30 bytecodes, see below):
                     call + return, nothing recorded (on 3.12+ less its call
                     site's cost, python_call_site: calibrate subtracts it)
  python_builtin     len(), which lives inside the interpreter: the hook sees
                     the C call, checks where it lives, records nothing (on
                     3.12+ its call site is then disabled: about 0)
  python_transition  a C function of an extension module in its own shared
                     object: one Python->native transition recorded
  python_operation   a Python function named rlscope_calibrate_operation,
                     which calibrate.rules (`rlscope run --rules`) makes an
                     operation: a push and a pop recorded
  process            nothing (--iterations 0): interpreter start-up (with
                     rlscope's sitecustomize) and exit, measured from outside

Each loop runs in a function of its own (loop_<case>), so a trace can tell
its events from the rest of the process's.

--burst B runs the iterations in bursts of B, each after an untimed pause of
P ms (default 25, longer than the flusher's 20 ms period), and times only the
bursts, so that rlscope's per-thread event ring never fills (a full ring
drops events, a cheaper path than recording them).
"""
import argparse
import copy
import importlib
import json
import os
import sys
import time
import types

# The transition's callee: the first of these whose module is a shared object
# of its own (Debian and Ubuntu build some into the interpreter, python.org
# builds few). (module, function, argument)
TRANSITION_CANDIDATES = (
    ("_json", "encode_basestring_ascii", ""),
    ("resource", "getpagesize", None),
    ("zlib", "crc32", b""),
    ("binascii", "crc32", b""),
    ("math", "fabs", 1.0),
)


LIMIT = 1000


OFFSET = 0.5


class State:
    __slots__ = ("value", "scale", "history")

    def __init__(self):
        self.value = 0
        self.scale = 0.99
        self.history = [0.0] * 8


# The called functions do a typical small method's work (about 30
# bytecodes: attribute loads and stores, globals, comparisons, float
# arithmetic, a subscript store): under CPython 3.11 any
# profile function makes every bytecode slower (specialisation is off
# while tracing), so the price of a call has to include the bytecode a
# call typically brings along, not just the call and return themselves.
def rlscope_calibrate_call(state):
    value = state.value
    if value > LIMIT:
        value = 0
    scaled = value * state.scale + OFFSET
    state.history[value & 7] = scaled
    state.value = value + 1
    return scaled if scaled < LIMIT else OFFSET


# The same body under the name calibrate.rules matches
# (`operation calibrate rlscope_calibrate_operation`), so the two cases
# differ only by the operation rlscope records.
# (3.10's code objects have no co_qualname: there rlscope takes the name
# from the function in this module's globals.)
_renamed = dict(co_name="rlscope_calibrate_operation")
if sys.version_info >= (3, 11):
    _renamed["co_qualname"] = "rlscope_calibrate_operation"
rlscope_calibrate_operation = types.FunctionType(
    rlscope_calibrate_call.__code__.replace(**_renamed), globals(), "rlscope_calibrate_operation")


def loop_python_call(n):
    f = rlscope_calibrate_call
    state = State()
    for _ in range(n):
        f(state)


def loop_python_call_site(n):
    f = copy._copy_immutable  # The standard library's: no rule, not the user's own.
    x = ()
    for _ in range(n):
        f(x)


def loop_python_builtin(n):
    f = len
    x = ()
    for _ in range(n):
        f(x)


def loop_python_transition_noargs(n, f):
    for _ in range(n):
        f()


def loop_python_transition(n, f, argument):
    for _ in range(n):
        f(argument)


def loop_python_operation(n):
    f = rlscope_calibrate_operation
    state = State()
    for _ in range(n):
        f(state)


def transition_callee():
    """(fields, loop, None) for the first usable candidate, else (None, None, why not)."""
    tried = []
    for module_name, function_name, argument in TRANSITION_CANDIDATES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            tried.append(f"{module_name}: not importable")
            continue
        path = getattr(module, "__file__", None) or ""
        function = getattr(module, function_name, None)
        if not path.endswith(".so"):
            tried.append(f"{module_name}: built into the interpreter")
            continue
        if type(function).__name__ != "builtin_function_or_method":
            tried.append(f"{module_name}.{function_name}: not a C function")
            continue
        fields = {"callee": f"{module_name}.{function_name}", "callee_file": path}
        if argument is None:
            return fields, lambda n: loop_python_transition_noargs(n, function), None
        return fields, lambda n: loop_python_transition(n, function, argument), None
    return None, None, "no extension module in a shared object of its own: " + "; ".join(tried)


def cases():
    """({name: (loop, events_per_iteration, extra fields)}, why python_transition is missing or None)."""
    found = {
        "python_call": (loop_python_call, 1, {"python_calls_per_iteration": 1}),
        "python_builtin": (loop_python_builtin, 1, {"callee": "len"}),
        "python_operation": (loop_python_operation, 2,
                             {"python_calls_per_iteration": 1, "function": "rlscope_calibrate_operation"}),
        "process": (None, 0, {}),
    }
    if sys.version_info >= (3, 12) and callable(getattr(copy, "_copy_immutable", None)):
        found["python_call_site"] = (loop_python_call_site, 1, {"callee": "copy._copy_immutable"})
    fields, loop, problem = transition_callee()
    if fields is not None:
        found["python_transition"] = (loop, 1, fields)
    return found, problem


class UncontendedTimer:
    """Times a loop so that a busy machine does not inflate it, as
    uncontended_timer.h does for the native workloads (which says why): in
    slices of about SLICE_TARGET_NS, setting aside those in which the thread
    waited for a CPU more than a tenth of the slice (its schedstat run
    delay), and those slower per iteration than OUTLIER_FACTOR times the
    median slice (a wait the kernel does not see: a VM's steal time).
    Slices are longer than the native ones: each adds a Python call and a
    return to the timed time, which must stay negligible next to the
    slice's iterations."""

    SLICE_TARGET_NS = 1_000_000
    OUTLIER_FACTOR = 2.0

    def __init__(self):
        try:
            self.schedstat = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.schedstat = -1
        self.slice = 16
        self.iterations = self.wall_ns = 0
        self.slices = []  # (iterations, ns less the run delay) of the slices not preempted.

    def run_delay_ns(self):
        if self.schedstat < 0:
            return -1
        try:
            return int(os.pread(self.schedstat, 128, 0).split()[1])
        except (OSError, IndexError, ValueError):
            return -1

    def time(self, loop, n):
        done = 0
        while done < n:
            count = min(self.slice, n - done)
            delay_before = self.run_delay_ns()
            begin = time.perf_counter_ns()  # CLOCK_MONOTONIC on Linux.
            loop(count)
            elapsed = time.perf_counter_ns() - begin
            delay_after = self.run_delay_ns()
            waited = delay_after - delay_before if 0 <= delay_before <= delay_after else 0
            self.iterations += count
            self.wall_ns += elapsed
            if waited * 10 <= elapsed:
                self.slices.append((count, elapsed - waited))
            done += count
            self.slice = max(1, min(4 * count, int(count * self.SLICE_TARGET_NS / elapsed))) if elapsed > 0 \
                else 2 * self.slice

    def kept_slices(self):
        """(iterations, ns) of the slices kept: not preempted, and not
        slower per iteration than OUTLIER_FACTOR times their median
        (weighted by iterations)."""
        ordered = sorted(self.slices, key=lambda s: s[1] / s[0])
        total, seen, median = sum(s[0] for s in ordered), 0, None
        for count, ns in ordered:
            seen += count
            if 2 * seen >= total:
                median = ns / count
                break
        kept_iterations = kept_ns = 0
        for count, ns in ordered:
            if ns / count > self.OUTLIER_FACTOR * median:
                break
            kept_iterations += count
            kept_ns += ns
        return kept_iterations, kept_ns

    def fields(self):
        estimated = self.wall_ns
        kept_iterations, kept_ns = self.kept_slices()
        if kept_iterations > 0:
            estimated = int(kept_ns / kept_iterations * self.iterations)
        kept = kept_iterations / self.iterations if self.iterations else 1.0
        return {"elapsed_ns": estimated, "wall_ns": self.wall_ns, "kept_fraction": round(kept, 4)}


def timed_loop(loop, n, burst, pause_ms):
    """All n iterations, at once or in bursts after untimed pauses: (the
    timer of the time inside the bursts, bursts)."""
    timer, bursts, done = UncontendedTimer(), 0, 0
    while done < n:
        count = min(burst, n - done) if burst > 0 else n - done
        if burst > 0:
            time.sleep(pause_ms / 1000)
        timer.time(loop, count)
        done += count
        bursts += 1
    return timer, bursts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--burst", type=int, default=0, help="iterations per timed burst (0: all at once)")
    parser.add_argument("--pause-ms", type=int, default=25, help="untimed pause before each burst")
    args = parser.parse_args()
    if args.list == (args.case is not None):
        parser.error("give one of --case, --list")
    available, transition_problem = cases()
    if args.list:
        for name in ("python_call_site", "python_call", "python_builtin", "python_transition", "python_operation",
                     "process"):
            if name in available:
                print(name)
        return 0
    if args.case == "python_transition" and transition_problem is not None:
        print(f"calibrate_python.py: case python_transition: {transition_problem}", file=sys.stderr)
        return 1
    if args.case not in available:
        parser.error(f"unknown case '{args.case}'")
    if args.iterations is None or args.iterations < 0:
        parser.error("--case needs --iterations N (N >= 0)")
    loop, events, extra = available[args.case]
    if loop is None and args.iterations != 0:
        parser.error("case process takes --iterations 0")
    if args.burst < 0 or args.pause_ms < 0:
        parser.error("--burst and --pause-ms want counts >= 0")

    n = args.iterations
    warmup = min(n // 10, 10000)
    timing, bursts = {"elapsed_ns": 0}, 0
    if loop is not None:
        timed_loop(loop, warmup, args.burst, args.pause_ms)
        timer, bursts = timed_loop(loop, n, args.burst, args.pause_ms)
        timing = timer.fields()
    line = {"case": args.case, "iterations": n, **timing, "events_per_iteration": events,
            "warmup_iterations": warmup, "python": sys.version.split()[0]}
    if args.burst > 0:
        line.update(burst=args.burst, bursts=bursts, pause_ms=args.pause_ms)
    line.update(extra)
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
