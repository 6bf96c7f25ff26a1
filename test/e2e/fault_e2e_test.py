#!/usr/bin/env python3
"""The fault suite: what `rlscope run` guarantees to the profiled
program when something goes wrong -- the collector is killed or stalls, the
program is killed, the program takes an unusual shape (fork, exec, spawn,
many threads, exit from a thread, dlclose, signal handlers calling hooked
functions), or the output directory is unwritable or fills up.

Every case compares the program's stdout and exit status with an unprofiled
run of the same command, and runs under its own deadline (CASE_TIMEOUT_S):
a hang kills every process the case started and fails that case by name.
The program is test/native/fault_program.c; its calls into libsimtest are
hooked as simulator calls, so every process and thread has events.

  fault_e2e_test.py --rlscope BIN --program BIN --dlclose-lib LIB --group collector|program|shapes|disk
"""
import ctypes
import glob
import json
import os
import platform
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope, scratch_dir  # noqa: E402

SIM = "*libsimtest*:simtest_*"
CASE_TIMEOUT_S = 60

# Orphans (the program after its collector was killed, grandchildren whose
# parent died) are re-parented to this process, so a case can wait for them
# and kill them when it hangs.
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def no_core_dumps():
    """preexec_fn: the crash cases must not leave core files behind."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def children():
    """Pids whose parent is this process (including adopted orphans)."""
    me, pids = os.getpid(), []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            pids.append(int(stat.split("/")[2]))
    return pids


def kill_everything():
    """After a hang: SIGKILL every process the case left, and reap them.
    A child's process group is killed only when it is not ours: rlscope,
    started by the case, shares the test's group, which is ctest's and
    the CI script's (a killed group there took the whole CI run down)."""
    own_group = os.getpgrp()
    for _ in range(20):
        pids = children()
        if not pids:
            return
        for pid in pids:
            try:
                group = os.getpgid(pid)
                if group != own_group:
                    os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap_orphans(0.2)


def reap_orphans(seconds):
    """Waits up to `seconds` for adopted orphans; {pid: wait status}."""
    reaped, deadline = {}, time.monotonic() + seconds
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid != 0:
            reaped[pid] = status
            continue
        if time.monotonic() >= deadline:
            return reaped
        time.sleep(0.01)


class Outcome:
    def __init__(self, returncode, stdout, stderr, seconds):
        self.returncode, self.stdout, self.stderr, self.seconds = returncode, stdout, stderr, seconds


def bounded(test, command, timeout=CASE_TIMEOUT_S, preexec_fn=no_core_dumps):
    """Runs `command` with stdout/stderr in files (a pipe would wait for
    every orphan holding it); fails the test, naming the command, if it
    does not finish within `timeout` seconds."""
    directory = scratch_dir(test)
    out_path, err_path = os.path.join(directory, "stdout"), os.path.join(directory, "stderr")
    start = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, preexec_fn=preexec_fn)
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_everything()
            process.wait()
            with open(err_path, errors="replace") as f:
                tail = f.read()[-2000:]
            test.fail(f"hung: {' '.join(command)} did not finish in {timeout} s; stderr:\n{tail}")
    seconds = time.monotonic() - start
    reap_orphans(0)
    with open(out_path, errors="replace") as f:
        stdout = f.read()
    with open(err_path, errors="replace") as f:
        stderr = f.read()
    return Outcome(returncode, stdout, stderr, seconds)


def program_pid(parent):
    """The fault_program process whose parent is `parent`."""
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                text = f.read()
        except OSError:
            continue
        if "(fault_program)" in text and text.rsplit(")", 1)[1].split()[1] == str(parent):
            return int(stat.split("/")[2])
    raise AssertionError(f"no fault_program child of {parent}")


def shell_status(returncode):
    """Popen's returncode as a shell (and `rlscope run`) reports it."""
    return 128 - returncode if returncode < 0 else returncode


def profile_command(out, command, options=()):
    return [ARGS.rlscope, "run", "--quiet", "--out", out, "--sim", SIM, *options, "--", *command]


def load_report(out):
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


class FaultCase(unittest.TestCase):
    def plain(self, command):
        return bounded(self, command)

    def profiled(self, command, options=(), preexec_fn=no_core_dumps):
        """`rlscope run` of `command`, checked against an unprofiled run:
        same stdout, same exit status. Returns (run dir, outcome, report)."""
        plain = self.plain(command)
        out = os.path.join(scratch_dir(self), "run")
        run = bounded(self, profile_command(out, command, options), preexec_fn=preexec_fn)
        self.assertEqual(run.stdout, plain.stdout, run.stderr)
        self.assertEqual(run.returncode, shell_status(plain.returncode), run.stderr)
        return out, run, load_report(out)

    def assert_accounted(self, report, processes, clean=True, min_events=1000):
        """`processes` traced processes, each with `min_events` or more
        events delivered or counted as dropped (every process here makes
        thousands of hooked calls), each ended cleanly (or not, `clean`)."""
        self.assertEqual(len(report["processes"]), processes, json.dumps(report["processes"])[:2000])
        for process in report["processes"]:
            self.assertGreaterEqual(process["events"] + process["dropped_events"], min_events, process["argv"])
            self.assertEqual(process["ended_cleanly"], clean, (process["argv"], process["problems"]))


class CollectorKilled(FaultCase):
    """Item 1: the collector dies (SIGKILL) or stalls (SIGSTOP) mid-run."""

    def start_and_wait_for_trace(self, out, command, err_path):
        # TMPDIR: the socket directory a killed rlscope leaves goes with the
        # case's scratch directory.
        env = dict(os.environ, TMPDIR=scratch_dir(self))
        with open(os.path.join(os.path.dirname(err_path), "stdout"), "w") as stdout, open(err_path, "w") as stderr:
            rlscope = subprocess.Popen(profile_command(out, command), stdout=stdout, stderr=stderr,
                                       stdin=subprocess.DEVNULL, preexec_fn=no_core_dumps, env=env)
        started = time.monotonic()
        # Any of the traces: under a fork storm the first file listed may
        # be a short child's that never grows past a block. 60 s: a loaded
        # machine (CI beside CPU hogs) is slow to start them all.
        deadline = started + 60
        while time.monotonic() < deadline:
            sizes = []
            for trace in glob.glob(os.path.join(out, "trace", "*.rlt")):
                try:
                    sizes.append(os.path.getsize(trace))
                except FileNotFoundError:
                    pass  # Renamed or removed between the listing and here.
            if sum(sizes) > 4096:
                return rlscope, started
            time.sleep(0.01)
        rlscope.kill()
        kill_everything()
        self.fail(f"no trace data within 60 s (trace files: {sizes})")

    def kill_collector_mid_run(self, command):
        """`command` under rlscope, SIGKILLed 0.3 s into the trace. The
        program is not rlscope's to take down: it runs on, adopted by us,
        and ends as it would have (exit status and stdout as unprofiled).
        Returns (plain run, out, stderr path, started, killed, ended,
        reaped orphans)."""
        plain = self.plain(command)
        directory = scratch_dir(self)
        out, err_path = os.path.join(directory, "run"), os.path.join(directory, "stderr")
        rlscope, started = self.start_and_wait_for_trace(out, command, err_path)
        time.sleep(0.3)
        rlscope.kill()
        rlscope.wait()
        killed = time.monotonic()
        reaped = reap_orphans(CASE_TIMEOUT_S)
        ended = time.monotonic()
        if not reaped:
            kill_everything()
            self.fail("the program did not end within the case's deadline after the collector was killed")
        status = list(reaped.values())[0]
        self.assertTrue(os.WIFEXITED(status), status)
        self.assertEqual(os.WEXITSTATUS(status), plain.returncode)
        with open(os.path.join(directory, "stdout")) as f:
            self.assertEqual(f.read(), plain.stdout)
        return plain, out, err_path, started, killed, ended, reaped

    def test_collector_sigkill(self):
        plain, out, err_path, started, killed, ended, reaped = self.kill_collector_mid_run(
            [ARGS.program, "work", "1500", "4"])
        self.assertEqual(len(reaped), 1, reaped)
        with open(err_path) as f:
            stderr = f.read()
        lost_lines = [line for line in stderr.splitlines() if "lost the collector" in line]
        self.assertEqual(len(lost_lines), 1, stderr)
        # The program lost no time to the dead collector: it ends when its
        # own work does (1.5 s after its start), not later.
        print(f"\ncollector killed {killed - started:.2f} s after the start; the program ended "
              f"{ended - started:.2f} s after the start (alone: {plain.seconds:.2f} s)", file=sys.stderr)
        self.assertLess(ended - started, plain.seconds + 1.0)
        # What the collector received before it died is on disk and readable.
        report = run_rlscope("report", "--quiet", out, timeout=CASE_TIMEOUT_S)
        self.assertIn(report.returncode, (0, 3), report.stderr)
        result = load_report(out)
        self.assertEqual(len(result["processes"]), 1)
        process = result["processes"][0]
        self.assertGreater(process["events"], 1000)
        self.assertFalse(process["ended_cleanly"])
        self.assertTrue(any("rlscope stopped before the command ended" in p for p in result["problems"]),
                        result["problems"])

    def test_a_slow_stream_reaches_the_disk_before_it_ends(self):
        """A trace file is written in blocks (format/trace_blocks.h), yet a
        process that sends little and then waits has its frames on disk
        while its stream is still open (Receiver::kBlockMaxAge), so a
        killed collector loses only its last moments."""
        directory = scratch_dir(self)
        out = os.path.join(directory, "run")
        env = dict(os.environ, TMPDIR=directory)
        command = [sys.executable, "-c", "import json, time; [json.dumps(i) for i in range(200)]; time.sleep(60)"]
        rlscope = subprocess.Popen(profile_command(out, command), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, preexec_fn=no_core_dumps,
                                   env=env)
        batches = 0
        try:
            deadline = time.monotonic() + 20  # A bound, not a margin: blocks go out within 0.3 s.
            while time.monotonic() < deadline and batches == 0:
                time.sleep(0.05)
                traces = glob.glob(os.path.join(out, "trace", "*.rlt"))
                if not traces:
                    continue
                dump = run_rlscope("dump", traces[0], timeout=CASE_TIMEOUT_S)
                batches = sum(1 for line in dump.stdout.splitlines() if line.startswith("@") and " batch " in line)
        finally:
            rlscope.kill()
            rlscope.wait()
            kill_everything()
        self.assertGreater(batches, 0, "no batch of the still-running process reached its trace file within 20 s")

    def test_collector_sigkill_while_forking(self):
        """Children started after the collector died find no collector: one
        line each on stderr, and they run on."""
        out = self.kill_collector_mid_run([ARGS.program, "fork_storm", "40"])[1]
        report = run_rlscope("report", "--quiet", out, timeout=CASE_TIMEOUT_S)
        self.assertIn(report.returncode, (0, 3), report.stderr)
        self.assertGreaterEqual(len(load_report(out)["processes"]), 2)

    def assert_finishes_as(self, rlscope, directory, returncode, stdout):
        """rlscope, continued, ends within three times the case's deadline
        with `returncode`, and the command wrote `stdout`. Three: with the
        sanitizer build beside two CPU hogs the thread churn case took
        37-52 s in all and once missed 60 s (a bound on a hang, not a
        speed check)."""
        try:
            self.assertEqual(rlscope.wait(timeout=3 * CASE_TIMEOUT_S), returncode)
        except subprocess.TimeoutExpired:
            kill_everything()
            self.fail("rlscope did not finish after being continued")
        with open(os.path.join(directory, "stdout")) as f:
            self.assertEqual(f.read(), stdout)

    def wait_with_collector_stopped(self, rlscope, started):
        """Stops rlscope (SIGSTOP), waits for its child the program to end
        (watched through /proc: it stays a zombie until rlscope runs
        again), continues rlscope; returns when the program ended."""
        os.kill(rlscope.pid, signal.SIGSTOP)
        try:
            program_stat = f"/proc/{program_pid(rlscope.pid)}/stat"
            deadline = started + CASE_TIMEOUT_S
            while time.monotonic() < deadline:
                try:
                    with open(program_stat) as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                except OSError:
                    break
                if state == "Z":
                    break
                time.sleep(0.005)
            return time.monotonic()
        finally:
            os.kill(rlscope.pid, signal.SIGCONT)

    def test_thread_churn_while_collector_stalled(self):
        """Threads that start and end while the collector is stopped give
        their rings back at once: the program's memory stays bounded by its
        live threads (1 MiB each), not by every thread it started (it grew
        by about 110 MB/s here before), and their events count as dropped."""
        command = [ARGS.program, "churn", "5000"]
        plain = self.plain(command)
        directory = scratch_dir(self)
        out, err_path = os.path.join(directory, "run"), os.path.join(directory, "stderr")
        rlscope, started = self.start_and_wait_for_trace(out, command, err_path)
        os.kill(rlscope.pid, signal.SIGSTOP)
        time.sleep(2.5)
        os.kill(rlscope.pid, signal.SIGCONT)
        self.assert_finishes_as(rlscope, directory, plain.returncode, plain.stdout)
        with open(err_path) as f:
            stderr = f.read()
        def peak_kb(text):
            values = [int(line.split()[1]) for line in text.splitlines() if line.startswith("vm_hwm_kb ")]
            self.assertEqual(len(values), 1, text[-2000:])
            return values[0]
        extra_kb = peak_kb(stderr) - peak_kb(plain.stderr)
        print(f"\nthread churn with the collector stopped 2.5 s: the program's peak memory +{extra_kb} kB",
              file=sys.stderr)
        # Measured: +25-52 MB (rings of the live threads and of those ended
        # before the reclaim began, the flusher's buffers), +331 MB without
        # the reclaim. The peak can come after the stall too: a collector
        # catching up on a loaded machine (a compile beside it) lagged the
        # threads for seconds, +141-210 MB while only a send blocked for
        # 50 ms or more reclaimed.
        # Now any wait on the collector keeps at most
        # Flusher::kMaxRetiredRingsWhileBlocked (64) ended threads' rings:
        # +37-49 MB under that load. Room is left for a slow flusher.
        self.assertLess(extra_kb, 128 * 1024, stderr[-2000:])
        process = load_report(out)["processes"][0]
        self.assertGreater(process["dropped_events"], 0)
        self.assertTrue(process["ended_cleanly"], process["problems"])

    def test_crash_with_collector_stalled(self):
        """The crash flush cannot send to a stopped collector: the crash
        waits kFatalFlushStallMs (500 ms) at most, then happens as usual."""
        command = [ARGS.program, "crash", "segv"]
        plain = self.plain(command)
        directory = scratch_dir(self)
        out, err_path = os.path.join(directory, "run"), os.path.join(directory, "stderr")
        rlscope, started = self.start_and_wait_for_trace(out, command, err_path)
        ended = self.wait_with_collector_stopped(rlscope, started)
        self.assert_finishes_as(rlscope, directory, 128 + signal.SIGSEGV, plain.stdout)
        print(f"\ncrash with the collector stopped: the program died {ended - started:.2f} s after its start "
              f"(alone: {plain.seconds:.2f} s)", file=sys.stderr)
        self.assertLess(ended - started, plain.seconds + 1.5)

    def test_collector_stalled(self):
        """A collector that stops reading (SIGSTOP) delays the program's exit
        by the preload's exit bound at most, never the program's work."""
        command = [ARGS.program, "work", "1500", "4"]
        plain = self.plain(command)
        directory = scratch_dir(self)
        out, err_path = os.path.join(directory, "run"), os.path.join(directory, "stderr")
        rlscope, started = self.start_and_wait_for_trace(out, command, err_path)
        ended = self.wait_with_collector_stopped(rlscope, started)
        self.assert_finishes_as(rlscope, directory, plain.returncode, plain.stdout)
        delay = (ended - started) - plain.seconds
        print(f"\ncollector stalled: the program ended {ended - started:.2f} s after its start "
              f"(alone: {plain.seconds:.2f} s)", file=sys.stderr)
        self.assertLess(delay, 5.0)
        result = load_report(out)
        self.assertEqual(len(result["processes"]), 1)
        process = result["processes"][0]
        self.assertGreater(process["events"] + process["dropped_events"], 1000)


class ProgramKilled(FaultCase):
    """Item 2: the program dies of a signal; `rlscope run` exits 128+N and
    reports what it received, the process marked as not ended cleanly."""

    def check_crash(self, how, signal_number, flushed):
        """`flushed`: the crash handler sent every call made before the
        signal (delivered or counted as dropped); SIGKILL cannot be caught,
        so its last flush interval is lost."""
        out, run, report = self.profiled([ARGS.program, "crash", how])
        self.assertEqual(run.returncode, 128 + signal_number)
        self.assert_accounted(report, 1, clean=False)
        self.assertEqual(report["exit_code"], 128 + signal_number)
        process = report["processes"][0]
        self.assertTrue(any("did not end cleanly" in p for p in process["problems"]), process["problems"])
        calls = int(re.search(r"^calls (\d+)", run.stderr, re.M).group(1))
        recorded = process["events"] + process["dropped_events"]
        print(f"\n{how}: {calls} calls made, {process['events']} events + {process['dropped_events']} dropped "
              f"in the report", file=sys.stderr)
        if flushed:
            self.assertGreaterEqual(recorded, calls)
        self.assertGreater(process["events"], 1000)

    def test_sigsegv(self):
        self.check_crash("segv", signal.SIGSEGV, flushed=True)

    def test_sigsegv_through_a_faulthandler(self):
        """A handler that puts back the SIG_DFL it replaced and raises
        again (Python's faulthandler, pytest's default): still flushed."""
        self.check_crash("segv_faulthandler", signal.SIGSEGV, flushed=True)

    def test_sigbus(self):
        self.check_crash("bus", signal.SIGBUS, flushed=True)

    @unittest.skipUnless(platform.machine() in ("x86_64", "AMD64"), "__builtin_trap is SIGILL on x86-64")
    def test_sigill(self):
        self.check_crash("ill", signal.SIGILL, flushed=True)

    def test_two_threads_crashing_at_once(self):
        """The second thread faults while the first waits for the crash
        flush: it waits too (it must not meet SIG_DFL and end the process
        before the flush), and both threads' calls are sent."""
        out, run, report = self.profiled([ARGS.program, "crash_two_threads"])
        self.assertEqual(run.returncode, 128 + signal.SIGSEGV)
        process = report["processes"][0]
        calls = int(re.search(r"^calls (\d+)", run.stderr, re.M).group(1))
        recorded = process["events"] + process["dropped_events"]
        print(f"\ntwo threads crashing: {calls} calls made, {recorded} in the report", file=sys.stderr)
        self.assertGreaterEqual(recorded, calls)

    def test_sigfpe(self):
        self.check_crash("fpe", signal.SIGFPE, flushed=True)

    def test_abort(self):
        self.check_crash("abort", signal.SIGABRT, flushed=True)

    def test_sigkill(self):
        self.check_crash("kill", signal.SIGKILL, flushed=False)

    def test_crash_at_once(self):
        """A crash in the first 2 ms, before the flusher knows its clock's
        rate: the crash flush still sends every call made."""
        out, run, report = self.profiled([ARGS.program, "crash_at_once"])
        self.assertEqual(run.returncode, 128 + signal.SIGSEGV)
        process = report["processes"][0]
        calls = int(re.search(r"^calls (\d+)", run.stderr, re.M).group(1))
        self.assertGreaterEqual(process["events"] + process["dropped_events"], calls, process)

    def test_programs_own_handler(self):
        """The program sees SIGSEGV as default and its own handler runs."""
        out, run, report = self.profiled([ARGS.program, "own_handler"])
        self.assertEqual(run.returncode, 9)
        self.assertIn("disposition at start: default", run.stdout)
        self.assertIn("caught SIGSEGV", run.stdout)

    def test_chaining_handler(self):
        """A handler set with signal() that calls the one it replaced: it
        replaced SIG_DFL, as without rlscope, and the fault ends the program
        (the crash handler, called as a function, must not leave it
        re-faulting for ever)."""
        out, run, report = self.profiled([ARGS.program, "chain_handler"])
        self.assertEqual(run.returncode, 128 + signal.SIGSEGV, run.stdout)
        self.assertIn("signal() replaced: default", run.stdout)

    def test_core_dump_kept(self):
        """Dumping core (or not) is the kernel's, as without rlscope: a
        parent reports the child's WCOREDUMP, compared with an unprofiled run."""
        directory = scratch_dir(self)
        reporter = ("import os, subprocess, sys\n"
                    "child = subprocess.Popen(sys.argv[1:], cwd=%r, stderr=subprocess.DEVNULL)\n"
                    "_, status = os.waitpid(child.pid, 0)\n"
                    "print('signal', os.WTERMSIG(status), 'core', os.WCOREDUMP(status))\n" % directory)

        def core_dumps_allowed():
            hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
            resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        command = [sys.executable, "-c", reporter, os.path.abspath(ARGS.program), "crash", "segv"]
        plain = bounded(self, command, preexec_fn=core_dumps_allowed)
        out = os.path.join(scratch_dir(self), "run")
        run = bounded(self, profile_command(out, command), preexec_fn=core_dumps_allowed)
        self.assertEqual(run.stdout, plain.stdout, run.stderr)
        self.assertIn("signal 11", run.stdout)


class ProcessShapes(FaultCase):
    """Item 3: output and status unchanged, no hang, every process and
    thread accounted for."""

    def test_fork_without_exec(self):
        out, run, report = self.profiled([ARGS.program, "fork"])
        self.assert_accounted(report, 2)

    def test_fork_storm(self):
        """Forks landing anywhere in four busy threads' (and the flusher's) work."""
        out, run, report = self.profiled([ARGS.program, "fork_storm", "40"])
        self.assert_accounted(report, 41, min_events=100)

    def test_fork_and_exec(self):
        out, run, report = self.profiled([ARGS.program, "forkexec"])
        self.assert_accounted(report, 2)

    def test_posix_spawn(self):
        out, run, report = self.profiled([ARGS.program, "spawn"])
        self.assert_accounted(report, 2)

    def test_64_threads(self):
        out, run, report = self.profiled([ARGS.program, "threads", "64"])
        self.assert_accounted(report, 1)
        self.assertGreaterEqual(len(report["processes"][0]["threads"]), 65)
        # Each thread's events delivered or counted as dropped (the promise,
        # docs/guarantees.md): on a busy 2-core machine the collector falls
        # behind this flood and some threads' rings go wholly to drops
        # (seen: 13 of 25 runs beside two CPU hogs, up to 47 threads).
        self.assertTrue(all(thread["events"] + thread["dropped_events"] > 0
                            for thread in report["processes"][0]["threads"]), report["processes"][0]["threads"][:3])

    def test_threads_ending_while_flushed(self):
        out, run, report = self.profiled([ARGS.program, "churn", "500"])
        self.assert_accounted(report, 1)
        self.assertGreaterEqual(len(report["processes"][0]["threads"]), 501)

    def test_exit_from_a_thread(self):
        out, run, report = self.profiled([ARGS.program, "thread_exit"])
        self.assertEqual(run.returncode, 7)
        self.assert_accounted(report, 1)

    def test_dlclose_of_a_hooked_library(self):
        out, run, report = self.profiled([ARGS.program, "dlclose", ARGS.dlclose_lib],
                                         options=("--sim", "*libsimfault*:simtest_*"))
        self.assert_accounted(report, 1, min_events=300000)  # Every call of the three rounds.

    def test_signal_handlers_calling_hooks(self):
        out, run, report = self.profiled([ARGS.program, "signals", "500"])
        self.assertIn("signals handled", run.stdout)
        self.assert_accounted(report, 1)


def world_reachable(path):
    """Every directory down to `path` lets other users through."""
    while True:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return False
        if path == os.path.dirname(path):
            return True
        path = os.path.dirname(path)


def file_size_limit(limit):
    def apply():
        no_core_dumps()
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


class DiskFaults(FaultCase):
    """Item 5: an unwritable --out fails before the command starts; a disk
    that fills up mid-run (a file size limit stands in for it: no root
    needed) costs trace data only, said clearly, and what was written stays
    readable."""

    def test_unwritable_out(self):
        directory = scratch_dir(self)
        not_a_directory = os.path.join(directory, "file")
        open(not_a_directory, "w").close()
        marker = os.path.join(directory, "ran")
        run = bounded(self, [ARGS.rlscope, "run", "--out", os.path.join(not_a_directory, "run"), "--",
                             "sh", "-c", f"touch {marker}"])
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("cannot create the output directory", run.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran although the run could not be recorded")

    def test_read_only_out(self):
        """An existing directory this user may not write into (as root: the
        run is made as `nobody`)."""
        directory = scratch_dir(self)
        marker = os.path.join(tempfile.mkdtemp(prefix="rlscope-e2e-marker-"), "ran")
        self.addCleanup(shutil.rmtree, os.path.dirname(marker), True)
        os.chmod(os.path.dirname(marker), 0o777)
        if os.geteuid() == 0:
            if not world_reachable(os.path.dirname(os.path.dirname(os.path.realpath(ARGS.rlscope)))):
                self.skipTest("the build tree is not readable by other users")
            os.chmod(directory, 0o755)

            def as_nobody():
                os.setgid(65534)
                os.setuid(65534)
            preexec_fn = as_nobody
        else:
            os.chmod(directory, 0o555)
            self.addCleanup(os.chmod, directory, 0o755)
            preexec_fn = None
        run = bounded(self, [ARGS.rlscope, "run", "--out", os.path.join(directory, "run"), "--",
                             "sh", "-c", f"touch {marker}"], preexec_fn=preexec_fn)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("Permission denied", run.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran although the run could not be recorded")

    def test_disk_full_mid_run(self):
        command = [ARGS.program, "calls", "40000", "5"]  # ~130 MB of plain trace, ~2 MB compressed.
        # Plain frames are up to 1 MiB: room for a few; compressed blocks
        # are tens of KiB.
        for options, limit in ((("--uncompressed-trace",), 4 << 20), ((), 512 << 10)):
            with self.subTest(options=options):
                out, run, report = self.profiled(command, options=options, preexec_fn=file_size_limit(limit))
                traces = glob.glob(os.path.join(out, "trace", "*.rlt"))
                self.assertEqual(len(traces), 1)
                self.assertLessEqual(os.path.getsize(traces[0]), limit)
                self.assertGreater(os.path.getsize(traces[0]), 0)
                problems = [p for p in report["problems"] if "cannot write" in p]
                self.assertEqual(len(problems), 1, report["problems"])
                self.assertIn(os.path.basename(traces[0]), problems[0])
                self.assertIn("bytes received were lost", problems[0])
                # Cut back to whole frames (blocks): the file reads without damage.
                again = run_rlscope("report", "--quiet", out, timeout=CASE_TIMEOUT_S)
                self.assertEqual(again.returncode, 0, again.stderr)
                self.assertGreater(report["processes"][0]["events"], 0)
                shutil.rmtree(out)


    def private_tmpfs(self, size):
        """A tmpfs of `size` of this case's own (root, as in CI), so no
        other test's writes move its free space; skips where it cannot."""
        mount_point = scratch_dir(self)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mount_point],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            self.skipTest(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
        self.addCleanup(subprocess.run, ["umount", "-l", mount_point])
        return mount_point

    def test_keep_free_stops_the_trace_not_the_command(self):
        """--keep-free: once the trace's filesystem would have less free,
        the trace stops (whole frames, readable), the command runs on with
        its own output and status, stderr and the report say so."""
        mount_point = self.private_tmpfs("64m")
        # Counted rounds, not a duration: a loaded machine makes fewer calls
        # in a second, and the trace must outgrow the room on any machine.
        command = [ARGS.program, "calls", "40000", "5"]  # ~130 MB of plain trace unchecked.
        plain = self.plain(command)
        out = os.path.join(mount_point, "run")
        run = bounded(self, profile_command(out, command, options=("--uncompressed-trace", "--keep-free", "48M")))  # Room for 16 MiB.
        self.assertEqual(run.stdout, plain.stdout, run.stderr)
        self.assertEqual(run.returncode, plain.returncode, run.stderr)
        self.assertIn("trace recording stopped at", run.stderr)
        traces = glob.glob(os.path.join(out, "trace", "*.rlt"))
        self.assertEqual(len(traces), 1)
        self.assertLess(os.path.getsize(traces[0]), 17 * 1024 * 1024)
        self.assertGreater(os.path.getsize(traces[0]), 8 * 1024 * 1024)
        report = load_report(out)
        problems = [p for p in report["problems"] if "--keep-free" in p]
        self.assertEqual(len(problems), 1, report["problems"])
        self.assertIn("bytes received were lost", problems[0])
        self.assertGreater(report["processes"][0]["events"], 0)
        again = run_rlscope("report", "--quiet", out, timeout=CASE_TIMEOUT_S)
        self.assertEqual(again.returncode, 0, again.stderr)
        shutil.rmtree(out)
        # A process that starts after the stop (the second, after the first
        # made ten times the 4 MiB of room) is not recorded: no empty trace
        # file for it, and the report says so.
        out = os.path.join(mount_point, "sequence")
        script = f"{ARGS.program} calls 12000 0 && {ARGS.program} calls 4000 0"
        run = bounded(self, profile_command(out, ["sh", "-c", script],
                                            options=("--uncompressed-trace", "--keep-free", "60M")))
        self.assertEqual(run.returncode, 0, run.stderr)
        report = load_report(out)
        self.assertTrue(any("not recorded" in p for p in report["problems"]), report["problems"])
        for trace in glob.glob(os.path.join(out, "trace", "*.rlt")):
            self.assertGreater(os.path.getsize(trace), 0)
        shutil.rmtree(out)
        # Compressed (the default): the room counts the bytes on disk,
        # 256 KiB. The trace compresses to 1.8-2.6 MB on a quiet machine;
        # on a loaded one under ASan the collector falls behind, the
        # program drops events and the trace is smaller (a CI run's stayed
        # under 1 MiB), so the room is a small part of what any run writes.
        out = os.path.join(mount_point, "compressed")
        run = bounded(self, profile_command(out, command, options=("--keep-free", f"{(64 << 10) - 256}K")))
        self.assertEqual(run.returncode, plain.returncode, run.stderr)
        traces = glob.glob(os.path.join(out, "trace", "*.rlt"))
        self.assertEqual(len(traces), 1)
        size = os.path.getsize(traces[0])
        self.assertIn("trace recording stopped at", run.stderr, f"the trace grew to {size} bytes")
        self.assertLess(size, 512 << 10)  # The room, and a block past a reading.
        self.assertGreater(size, 64 << 10)
        again = run_rlscope("report", "--quiet", out, timeout=CASE_TIMEOUT_S)
        self.assertEqual(again.returncode, 0, again.stderr)

    def test_a_bad_keep_free_is_a_usage_error(self):
        result = run_rlscope("run", "--keep-free", "lots", "--out", os.path.join(scratch_dir(self), "r"), "--", "true")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--keep-free", result.stderr)

    def test_disk_full_on_a_small_tmpfs(self):
        """The real thing where this process may mount (root, as in CI):
        ENOSPC on a 3 MiB tmpfs."""
        mount_point = self.private_tmpfs("3m")
        command = [ARGS.program, "calls", "40000", "5"]
        plain = self.plain(command)
        # --keep-free 0: written until the disk is full.
        out = os.path.join(mount_point, "run")
        run = bounded(self, profile_command(out, command, options=("--uncompressed-trace", "--keep-free", "0")))
        self.assertEqual(run.stdout, plain.stdout, run.stderr)
        self.assertEqual(run.returncode, plain.returncode, run.stderr)
        report = load_report(out)
        problems = [p for p in report["problems"] if "No space left on device" in p]
        self.assertEqual(len(problems), 1, report["problems"])
        self.assertIn("bytes received were lost", problems[0])
        again = run_rlscope("report", "--quiet", out, timeout=CASE_TIMEOUT_S)
        self.assertEqual(again.returncode, 0, again.stderr)
        shutil.rmtree(out)
        # The default keeps 5 % of this filesystem free: the trace stops
        # short of full, so the command's own writes (and the report's)
        # still fit.
        out = os.path.join(mount_point, "default")
        run = bounded(self, profile_command(out, command, options=("--uncompressed-trace",)))
        self.assertEqual(run.returncode, plain.returncode, run.stderr)
        self.assertIn("trace recording stopped at", run.stderr)
        report = load_report(out)
        self.assertTrue(any("--keep-free" in p for p in report["problems"]), report["problems"])
        self.assertFalse(any("No space left" in p for p in report["problems"]), report["problems"])
        self.assertTrue(os.path.getsize(os.path.join(out, "report.html")) > 0)


GROUPS = {"collector": CollectorKilled, "program": ProgramKilled, "shapes": ProcessShapes, "disk": DiskFaults}

if __name__ == "__main__":
    # --group picks one class (one ctest test each); the rest go to unittest.
    # (No loop variable at module level: unittest would find the class in it.)
    if "--group" in sys.argv:
        at = sys.argv.index("--group")
        chosen = sys.argv[at + 1]
        del sys.argv[at:at + 2]
        for unwanted in [cls.__name__ for name, cls in GROUPS.items() if name != chosen]:
            del globals()[unwanted]
        del unwanted
    main(extra_arguments=("--program", "--dlclose-lib"))
