"""Shared helpers of the end-to-end tests: paths of the built binaries (from
the command line ctest gives) and one `rlscope run` in a scratch directory."""
import argparse
import atexit
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

ARGS = argparse.Namespace()

# Every rlscope these tests start looks for this machine's calibration in a
# cache of its own, empty: results must not depend on whether the user ran
# `rlscope calibrate` (tests that want one pass --calibration FILE).
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="rlscope-e2e-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)


def run_rlscope(*args, env=None, timeout=120):
    return subprocess.run([ARGS.rlscope, *args], capture_output=True, text=True, errors="replace", env=env,
                          timeout=timeout)


def scratch_dir(test):
    path = tempfile.mkdtemp(prefix="rlscope-e2e-")
    test.addCleanup(shutil.rmtree, path, True)
    return path


class ProfiledRun:
    """One `rlscope run -- COMMAND` in a fresh directory; checks the exit code
    and loads report.json."""

    def __init__(self, test, command, expect_exit=0, env=None, options=(), timeout=120):
        self.dir = scratch_dir(test)
        self.out = os.path.join(self.dir, "run")
        self.result = run_rlscope("run", *options, "--out", self.out, "--", *command, env=env, timeout=timeout)
        test.assertEqual(self.result.returncode, expect_exit, self.result.stderr)
        with open(os.path.join(self.out, "report.json")) as f:
            self.report = json.load(f)

    def process_by_command(self, needle):
        return [p for p in self.report["processes"] if any(needle in arg for arg in p["argv"])]


# Kinds whose times the settled claim does not cover (a thread's birth is
# recorded at its first event) or that carry addresses, not times.
UNSETTLED_KINDS = ("thread_begin", "stack_frames")


def check_settled(test, trace_dir):
    """Each trace's settled claims (rlscope_trace.fbs Batch.settled_ns) hold:
    no event in a later batch begins before the latest claim made for its
    thread (its own settled=, else its batch's). A trace of many claims
    must also have them keep up with the run: its last batch-wide claim
    past the middle of its events' span (claims frozen at the start, or 1
    everywhere, are true but useless). Returns (claims, events checked
    against one) summed over the traces, so a caller can tell the check
    was not empty."""
    claims = checked = 0
    for name in sorted(os.listdir(trace_dir)):
        if not name.endswith(".rlt"):
            continue
        dump = run_rlscope("dump", os.path.join(trace_dir, name), timeout=300)
        test.assertEqual(dump.returncode, 0, dump.stderr)
        batch_claim = None  # The latest batch-wide claim.
        trace_claims = 0
        first_begin, last_end = None, None
        thread_claims = {}  # instance -> its latest claim (of its own or a batch's).
        pending_batch = None
        pending_threads = {}
        thread = None
        for line in dump.stdout.splitlines():
            if line.startswith("@"):
                # A new frame: the claims of the previous batch now apply.
                if pending_batch is not None:
                    claims += 1
                    trace_claims += 1
                    before = batch_claim or 0
                    batch_claim = max(before, pending_batch)
                    for instance in thread_claims:
                        if instance not in pending_threads:
                            thread_claims[instance] = max(thread_claims[instance], pending_batch)
                    for instance, ns in pending_threads.items():
                        thread_claims[instance] = max(thread_claims.get(instance, before), ns)
                    pending_batch, pending_threads = None, {}
                match = re.search(r" batch \d+ settled=(\d+)$", line)
                if match:
                    pending_batch = int(match.group(1))
                continue
            match = re.match(r"  events tid=\d+ instance=(\d+) count=\d+ dropped=\d+(?: settled=(\d+))?$", line)
            if match:
                thread = int(match.group(1))
                if match.group(2) is not None:
                    pending_threads[thread] = int(match.group(2))
                continue
            match = re.match(r"    (\S+)\s+(-?\d+) (-?\d+) dur=", line)
            if match and thread is not None and match.group(1) not in UNSETTLED_KINDS:
                begin, end = int(match.group(2)), int(match.group(3))
                first_begin = begin if first_begin is None else min(first_begin, begin)
                last_end = end if last_end is None else max(last_end, end)
                bound = thread_claims.get(thread, batch_claim)
                if bound is not None:
                    checked += 1
                    test.assertGreaterEqual(int(match.group(2)), bound,
                                            f"{name}: {line.strip()} begins before the settled time {bound} of "
                                            f"thread instance {thread}")
        if pending_batch is not None:  # The last frame's claim.
            batch_claim = max(batch_claim or 0, pending_batch)
        if trace_claims >= 10 and first_begin is not None:
            test.assertGreater(batch_claim, (first_begin + last_end) / 2,
                               f"{name}: the claims stop at {batch_claim}, short of the middle of the events' span "
                               f"[{first_begin}, {last_end}]")
    return claims, checked


MANY_CALL_SITES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "many_call_sites.py")


def check_many_call_sites(test, python, steps=2000):
    """Profiles python_programs/many_call_sites.py (twelve places in one
    loop calling native code) and checks that each listed line has its own
    calls: a compare_digest line `steps` (one C function), a hashing line
    twice that (the constructor, then the hash's digest method)."""
    run = ProfiledRun(test, [python, MANY_CALL_SITES, str(steps)], options=("--quiet",))
    test.assertEqual(run.result.stdout.split()[0], str(steps))
    (process,) = run.report["processes"]
    lines = [line for line in process["python_lines"] if line["file"].endswith("many_call_sites.py")]
    test.assertGreaterEqual(len({line["line"] for line in lines}), 8, process["python_lines"])
    # Events the collector could not keep (a machine busy enough to stall
    # it) may take calls away, never add them, and are counted.
    dropped = process["dropped_events"]
    for line in lines:
        expected = steps if "compare_digest" in line["source"] else 2 * steps if "_hashlib." in line["source"] else 0
        if dropped:
            test.assertLessEqual(line["calls"], expected, (line, dropped))
            test.assertGreaterEqual(line["calls"], expected - dropped, (line, dropped))
        else:
            test.assertEqual(line["calls"], expected, line)


def check_hook_breakdown(test, python, steps=20000):
    """RLSCOPE_HOOK_BREAKDOWN=1 on many_call_sites.py: the process prints
    its timed callbacks by kind at exit, and the timed ones include the
    native calls' returns as well as the calls (their gaps vary: a fixed
    gap of 256 timed only the calls of this loop, whose callbacks come in
    pairs). Without the variable, nothing is printed."""
    env = dict(os.environ, RLSCOPE_HOOK_BREAKDOWN="1")
    run = ProfiledRun(test, [python, MANY_CALL_SITES, str(steps)], options=("--quiet",), env=env)
    parts = {}
    for match in re.finditer(r"python hook part (.+?) +(\d+) samples, +([\d.]+) ns each", run.result.stderr):
        parts[match.group(1)] = int(match.group(2))
    test.assertIn("call recorded", parts, run.result.stderr)
    test.assertIn("native return", parts, run.result.stderr)
    # Every recorded call returns: their returns are timed about as often.
    test.assertGreater(parts["native return"], parts["call recorded"] / 2, parts)
    quiet = ProfiledRun(test, [python, MANY_CALL_SITES, "100"], options=("--quiet",))
    test.assertNotIn("python hook part", quiet.result.stderr)


def trace_stream_bytes(path):
    """Bytes of stream a trace file holds (format/trace_reader.h,
    TraceStreamBytes): its size when plain, its blocks' stream sizes
    (format/trace_blocks.h) when compressed."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"RLTZ":
        return len(data)
    total, offset = 0, 8
    while offset + 8 <= len(data):
        compressed, stream = struct.unpack_from("<II", data, offset)
        total += stream
        offset += 8 + compressed
    return total


def ledger_allowances(ledger):
    """{operation: ns} by which rlscope's view of an operation's CUDA calls
    may be off the fake runtime's ledger beyond a test's fixed margin, both
    measured in the same run (calibration/fake_cuda/fake_cudart.cc): the time the
    operation's threads waited for a CPU in it ("preempted": a preemption
    between the two sides' timestamps counts on one side only; about 0 on
    a quiet machine), and for the first call's operation the loader's part
    of injecting rlscope ("injection": done for the profiler alone, inside
    no ledger window, and not something rlscope can time)."""
    allowance = dict(ledger["preempted"])
    injection = ledger["injection"]
    if injection["operation"]:
        allowance[injection["operation"]] = allowance.get(injection["operation"], 0) + injection["loader_ns"]
    return allowance


def main(extra_arguments=(), optional_arguments=()):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rlscope", required=True)
    for name in extra_arguments:
        parser.add_argument(name, required=True)
    for name in optional_arguments:
        parser.add_argument(name, default="")
    known, rest = parser.parse_known_args()
    vars(ARGS).update(vars(known))
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
