#!/usr/bin/env python3
"""End-to-end tests of the rlscope CLI that need no CUDA: exit statuses,
signals, processes and exec chains, bad input.

  cli_e2e_test.py --rlscope BIN [unittest args]
"""
import json
import os
import pty
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope, scratch_dir  # noqa: E402

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class ExitStatus(unittest.TestCase):
    def test_exit_code_is_the_commands(self):
        run = ProfiledRun(self, ["sh", "-c", "exit 7"], expect_exit=7)
        self.assertEqual(run.report["exit_code"], 7)

    def test_death_by_signal_exits_128_plus_signal(self):
        run = ProfiledRun(self, ["sh", "-c", "kill -KILL $$"], expect_exit=128 + int(signal.SIGKILL))
        self.assertEqual(run.report["exit_code"], 128 + int(signal.SIGKILL))

    def test_sigterm_sent_to_rlscope_reaches_the_command(self):
        out = os.path.join(scratch_dir(self), "run")
        proc = subprocess.Popen([ARGS.rlscope, "run", "--out", out, "--", "sleep", "30"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Timer(1.0, proc.send_signal, [signal.SIGTERM]).start()
        _, stderr = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 128 + int(signal.SIGTERM), stderr)
        self.assertTrue(os.path.exists(os.path.join(out, "report.json")))

    def test_a_signal_to_rlscopes_process_group_reaches_the_command_once(self):
        # Slurm, `kill -TERM -PGID` and shells' `kill %1` signal the whole
        # group: COMMAND must not get it both directly and forwarded.
        script = ("import signal, time\n"
                  "count = 0\n"
                  "def on_term(*_):\n"
                  "    global count\n"
                  "    count += 1\n"
                  "signal.signal(signal.SIGTERM, on_term)\n"
                  "print('ready', flush=True)\n"
                  "deadline = time.time() + 1.5\n"
                  "while time.time() < deadline:\n"
                  "    time.sleep(0.01)\n"
                  "print(count)\n")
        out = os.path.join(scratch_dir(self), "run")
        proc = subprocess.Popen([ARGS.rlscope, "run", "--quiet", "--out", out, "--", PYTHON, "-c", script],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.assertEqual(proc.stdout.readline(), "ready\n")
        os.killpg(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertEqual(stdout, "1\n")

    def test_stdout_is_the_commands_alone(self):
        run = ProfiledRun(self, ["sh", "-c", "echo hello"])
        self.assertEqual(run.result.stdout, "hello\n")
        self.assertIn("rlscope report:", run.result.stderr)

    def test_quiet_prints_no_report(self):
        out = os.path.join(scratch_dir(self), "run")
        result = run_rlscope("run", "--quiet", "--out", out, "--", "true")
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stderr, "")
        self.assertTrue(os.path.exists(os.path.join(out, "report.txt")))


class InheritedSignals(unittest.TestCase):
    """COMMAND gets the signal mask and ignored signals rlscope was started
    with, as from a shell (`nohup`, a blocked SIGINT), not a reset mask."""

    @staticmethod
    def started_with_hup_ignored_and_int_blocked():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGUSR1})

    def signal_state(self, command):
        result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                                preexec_fn=self.started_with_hup_ignored_and_int_blocked)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_the_command_inherits_rlscopes_mask_and_ignored_signals(self):
        command = ["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"]
        plain = self.signal_state(command)
        out = os.path.join(scratch_dir(self), "run")
        profiled = self.signal_state([ARGS.rlscope, "run", "--quiet", "--out", out, "--", *command])
        self.assertEqual(profiled, plain)
        blocked = int(plain.split("SigBlk:")[1].split()[0], 16)
        self.assertTrue(blocked & (1 << (int(signal.SIGINT) - 1)), plain)
        ignored = int(plain.split("SigIgn:")[1].split()[0], 16)
        self.assertTrue(ignored & (1 << (int(signal.SIGHUP) - 1)), plain)


class Processes(unittest.TestCase):
    def test_every_process_of_the_command_is_traced(self):
        run = ProfiledRun(self, ["sh", "-c", "sleep 0.05; /bin/true; exit 0"])
        commands = sorted(p["argv"][0] for p in run.report["processes"])
        self.assertEqual(commands, ["/bin/true", "sh", "sleep"])
        for process in run.report["processes"]:
            self.assertTrue(process["ended_cleanly"], process)

    def test_exec_keeps_one_process_with_the_new_command(self):
        run = ProfiledRun(self, ["sh", "-c", "exec sleep 0.05"])
        (process,) = run.report["processes"]
        self.assertEqual(process["argv"], ["sleep", "0.05"])
        self.assertTrue(process["ended_cleanly"])

    def test_python_fork_with_os_exit_and_threads(self):
        script = ("import os, threading, time\n"
                  "t = threading.Thread(target=time.sleep, args=(0.05,)); t.start(); t.join()\n"
                  "pid = os.fork()\n"
                  "if pid == 0:\n"
                  "    time.sleep(0.05); os._exit(3)\n"
                  "_, status = os.waitpid(pid, 0)\n"
                  "print(os.waitstatus_to_exitcode(status))\n")
        run = ProfiledRun(self, [PYTHON, "-c", script])
        self.assertEqual(run.result.stdout, "3\n")
        processes = run.report["processes"]
        self.assertEqual(len(processes), 2)
        child = next(p for p in processes if p["forked_from"] != 0)
        parent = next(p for p in processes if p["forked_from"] == 0)
        self.assertEqual(child["forked_from"], parent["pid"])
        self.assertTrue(child["ended_cleanly"], "os._exit must flush the child's events")
        self.assertGreaterEqual(child["end_ns"] - child["begin_ns"], 50_000_000)

    def test_rows_partition_the_traced_thread_time(self):
        run = ProfiledRun(self, ["sh", "-c", "sleep 0.05"])
        for process in run.report["processes"]:
            total = sum(r["ns"] for r in run.report["rows"] if r["process"] == process["pid"])
            self.assertEqual(total, process["traced_thread_ns"])
            # Blocked time (a sleep the flusher saw as idle) is the
            # process's wait_ns, in no row.
            self.assertEqual(total + process["wait_ns"],
                             sum(t["end_ns"] - t["begin_ns"] for t in process["threads"]))


class ProgramIsUnharmed(unittest.TestCase):
    def test_a_program_that_closes_every_fd_keeps_its_own_io(self):
        # Daemons and subprocess children close all fds and reopen: the
        # numbers rlscope used then name the program's files and sockets,
        # which rlscope must neither read nor write.
        script = ("import os, socket, time\n"
                  "time.sleep(0.05)\n"
                  "os.closerange(3, 65536)\n"
                  "path = '/proc/self/exe'\n"
                  "size = os.path.getsize(path)\n"
                  "fd = os.open(path, os.O_RDONLY)\n"
                  "mine, peer = socket.socketpair()\n"
                  "time.sleep(0.2)\n"
                  "data = b''\n"
                  "while chunk := os.read(fd, 1 << 16):\n"
                  "    data += chunk\n"
                  "peer.setblocking(False)\n"
                  "try:\n"
                  "    stray = len(peer.recv(4096))\n"
                  "except BlockingIOError:\n"
                  "    stray = 0\n"
                  "print(len(data) == size, stray)\n")
        run = ProfiledRun(self, [PYTHON, "-c", script])
        self.assertEqual(run.result.stdout, "True 0\n")

    def test_the_program_gets_the_users_glibc_tunables_while_rlscope_uses_huge_pages(self):
        # rlscope re-executes itself with glibc.malloc.hugetlb=1
        # (collector/huge_page_malloc.h); the program it launches (its
        # child: $PPID is rlscope) sees GLIBC_TUNABLES as the user set it,
        # or unset, and none of rlscope's bookkeeping.
        script = ("import os\n"
                  "print(repr(os.environ.get('GLIBC_TUNABLES')))\n"
                  "print(sorted(k for k in os.environ if k.startswith('RLSCOPE_SAVED')))\n"
                  "with open(f'/proc/{os.getppid()}/environ', 'rb') as f:\n"
                  "    print(b'glibc.malloc.hugetlb=1' in f.read())\n")
        env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "RLSCOPE_HUGE_PAGES")}
        unset = ProfiledRun(self, [PYTHON, "-c", script], env=env)
        self.assertEqual(unset.result.stdout, "None\n[]\nTrue\n")
        user = ProfiledRun(self, [PYTHON, "-c", script], env=dict(env, GLIBC_TUNABLES="glibc.malloc.perturb=0"))
        self.assertEqual(user.result.stdout, "'glibc.malloc.perturb=0'\n[]\nTrue\n")
        off = ProfiledRun(self, [PYTHON, "-c", script], env=dict(env, RLSCOPE_HUGE_PAGES="0"))
        self.assertEqual(off.result.stdout, "None\n[]\nFalse\n")

    def test_names_that_are_not_utf8_do_not_break_the_report(self):
        run = ProfiledRun(self, ["/bin/echo", b"caf\xe9"])  # Latin-1, invalid as UTF-8.
        self.assertEqual(run.report["command"][1], "caf\ufffd")
        self.assertTrue(run.report["processes"])


class ReportCommand(unittest.TestCase):
    def test_report_reproduces_the_run_report(self):
        run = ProfiledRun(self, ["sh", "-c", "sleep 0.02"])
        again = run_rlscope("report", run.out)
        self.assertEqual(again.returncode, 0, again.stderr)
        with open(os.path.join(run.out, "report.txt")) as f:
            self.assertEqual(again.stdout, f.read())
        with open(os.path.join(run.out, "report.json")) as f:
            self.assertEqual(json.load(f)["rows"], run.report["rows"])

    def test_corrupt_trace_is_analysed_up_to_the_damage(self):
        run = ProfiledRun(self, ["sh", "-c", "sleep 0.05"])
        # sh execs sleep: two streams of one pid; damage the first.
        trace = sorted(os.listdir(os.path.join(run.out, "trace")))[0]
        path = os.path.join(run.out, "trace", trace)
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[-10:] = b"\xff" * 10  # Garbage inside the last frame.
            f.seek(0)
            f.write(data)
        result = run_rlscope("report", run.out)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn(path, result.stdout)
        self.assertIn("byte offset", result.stdout)


class BadInput(unittest.TestCase):
    def check(self, args, code, needle):
        result = run_rlscope(*args)
        self.assertEqual(result.returncode, code, result.stderr)
        self.assertIn(needle, result.stderr)
        self.assertNotIn("terminate called", result.stderr)

    def test_usage_errors(self):
        self.check(["run", "--bogus", "--", "true"], 2, "unknown option '--bogus'")
        self.check(["run"], 2, "no command to profile")
        self.check(["run", "--out"], 2, "needs a value")
        self.check(["frobnicate"], 2, "unknown command 'frobnicate'")
        self.check([], 2, "usage:")
        self.check(["report"], 2, "no run directory given")
        self.check(["report", "a", "b"], 2, "exactly one run directory")
        self.check(["dump"], 2, "exactly one trace file")
        self.check(["python-path", "extra"], 2, "takes no arguments")
        self.check(["python-path", "--bogus"], 2, "unknown option '--bogus'")
        self.check(["merge", "/tmp"], 2, "give two or more run directories")
        self.check(["merge", "--bogus", "a", "b"], 2, "unknown option '--bogus'")
        self.check(["merge", "/tmp", "/tmp/"], 2, "/tmp/ is given twice")
        self.check(["merge", "/nonexistent-a", "/nonexistent-b"], 1, "/nonexistent-a is not a directory")

    def test_merge_never_waits_on_a_fifo(self):
        # A FIFO named report.json in a node's directory is refused, not
        # read (a read would wait for a writer forever).
        node = scratch_dir(self)
        os.mkfifo(os.path.join(node, "report.json"))
        self.check(["merge", node, "/tmp"], 1, "not a regular file")

    def test_help_explains_every_command(self):
        for command in (["--help"], ["run", "--help"], ["report", "--help"], ["dump", "--help"], ["merge", "--help"],
                        ["python-path", "--help"]):
            result = run_rlscope(*command)
            self.assertEqual(result.returncode, 0)
            self.assertIn("usage: rlscope", result.stdout)

    def test_unwritable_out_directory(self):
        blocker = tempfile.NamedTemporaryFile(prefix="rlscope-e2e-")
        self.check(["run", "--out", os.path.join(blocker.name, "sub"), "--", "true"], 1,
                   "cannot create the output directory")

    def test_out_directory_holding_a_run_is_refused(self):
        run = ProfiledRun(self, ["true"])
        self.check(["run", "--out", run.out, "--", "true"], 1, "already holds an rlscope run")

    def test_missing_command(self):
        out = os.path.join(scratch_dir(self), "r")
        self.check(["run", "--out", out, "--", "/no/such/program"], 127, "cannot run '/no/such/program'")
        # meta.json says so (not the provisional "rlscope stopped ... (killed?)").
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["exit_code"], 127)
        self.assertEqual(len(meta["collector_problems"]), 1, meta["collector_problems"])
        self.assertIn("could not be started", meta["collector_problems"][0])

    def test_a_command_that_cannot_be_executed_exits_126_as_from_a_shell(self):
        scratch = scratch_dir(self)
        not_executable = os.path.join(scratch, "script.sh")
        with open(not_executable, "w") as f:
            f.write("#!/bin/sh\necho ran\n")
        os.chmod(not_executable, 0o644)
        for command, reason in ((not_executable, "Permission denied"), (scratch, "Is a directory")):
            shell = subprocess.run(["sh", "-c", '"$0"', command], capture_output=True)
            self.assertEqual(shell.returncode, 126)
            out = os.path.join(scratch_dir(self), "r")
            result = run_rlscope("run", "--quiet", "--out", out, "--", command)
            self.assertEqual(result.returncode, 126, result.stderr)
            lines = result.stderr.splitlines()
            self.assertEqual(len(lines), 1, result.stderr)
            self.assertIn(f"cannot run '{command}': {reason}", lines[0])
            with open(os.path.join(out, "meta.json")) as f:
                self.assertEqual(json.load(f)["exit_code"], 126)

    def test_a_command_not_in_path_exits_127_as_from_a_shell(self):
        out = os.path.join(scratch_dir(self), "r")
        self.check(["run", "--out", out, "--", "no-such-command-rlscope"], 127,
                   "cannot run 'no-such-command-rlscope': command not found")
        # A missing #! interpreter is "not found" to bash and dash too.
        script = os.path.join(scratch_dir(self), "script.sh")
        with open(script, "w") as f:
            f.write("#!/no/such/interpreter\n")
        os.chmod(script, 0o755)
        self.assertEqual(subprocess.run(["sh", "-c", '"$0"', script], capture_output=True).returncode, 127)
        self.check(["run", "--out", os.path.join(scratch_dir(self), "r"), "--", script], 127,
                   f"cannot run '{script}': its #! interpreter was not found")

    def test_report_of_a_directory_that_is_not_a_run(self):
        empty = scratch_dir(self)
        self.check(["report", empty], 1, "is not an rlscope run directory")
        self.check(["report", os.path.join(empty, "missing")], 1, "no such directory")

    def test_dump_of_garbage(self):
        path = os.path.join(scratch_dir(self), "x.rlt")
        with open(path, "wb") as f:
            f.write(b"\x10\x00\x00\x00not a trace at all")
        self.check(["dump", path], 1, "not a readable rlscope trace")


def run_on_pty(test, options=(), env_changes=None, seconds=1.2):
    """`rlscope run` of a short busy Python loop with stderr on a pseudo
    terminal (stdout a pipe): returns (everything written to the terminal,
    stdout, report.txt)."""
    out = os.path.join(scratch_dir(test), "run")
    env = dict(os.environ, TERM="xterm")
    env.pop("NO_COLOR", None)
    env.update(env_changes or {})
    script = f"import time\nt = time.time()\nwhile time.time() - t < {seconds}: sum(range(1000))\nprint('done')\n"
    master, slave = pty.openpty()
    proc = subprocess.Popen([ARGS.rlscope, "run", *options, "--out", out, "--", PYTHON, "-c", script],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal has gone.
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    stdout = proc.stdout.read()
    proc.stdout.close()
    test.assertEqual(proc.wait(timeout=60), 0)
    with open(os.path.join(out, "report.txt"), "rb") as f:
        report_txt = f.read()
    return b"".join(chunks).decode(errors="replace"), stdout.decode(), report_txt


class Terminal(unittest.TestCase):
    def test_without_a_terminal_nothing_is_drawn_or_coloured(self):
        run = ProfiledRun(self, [PYTHON, "-c", "print('hi')"], env=dict(os.environ, TERM="xterm"))
        self.assertIn("rlscope report:", run.result.stderr)
        self.assertNotIn("\r", run.result.stderr)
        self.assertNotIn("\x1b", run.result.stderr)

    def test_on_a_terminal_a_status_line_then_the_coloured_report(self):
        terminal, stdout, report_txt = run_on_pty(self)
        self.assertEqual(stdout, "done\n")
        self.assertIn("\r\x1b[K", terminal)
        status = terminal.split("\r\x1b[K")[1]
        self.assertTrue(status.startswith("rlscope: "), terminal)
        self.assertIn(" events (", status)
        self.assertIn(" dropped", status)
        # Erased before the report, which is printed, coloured.
        before_report = terminal[:terminal.index("rlscope report:")]
        # (The terminal turns "\n" into "\r\n".)
        self.assertTrue(before_report.endswith("\r\x1b[K\r\n\x1b[1m"), repr(before_report[-200:]))
        self.assertIn("rlscope: results in", terminal)
        self.assertNotIn(b"\x1b", report_txt)
        self.assertNotIn(b"\r", report_txt)
        self.assertTrue(report_txt.startswith(b"rlscope report:"))

    def test_no_color_keeps_the_status_line_but_not_the_colours(self):
        terminal, _, report_txt = run_on_pty(self, env_changes={"NO_COLOR": "1"})
        self.assertIn(" events (", terminal)
        self.assertNotIn("\x1b[1m", terminal)
        self.assertNotIn("\x1b[31m", terminal)
        self.assertIn("rlscope report:", terminal)
        self.assertNotIn(b"\x1b", report_txt)

    def test_dumb_terminal_and_quiet_draw_nothing(self):
        terminal, _, _ = run_on_pty(self, env_changes={"TERM": "dumb"}, seconds=0.6)
        self.assertNotIn("\r\x1b[K", terminal.replace("\r\n", "\n"))
        self.assertNotIn("\x1b", terminal)
        self.assertIn("rlscope report:", terminal)
        terminal, _, _ = run_on_pty(self, options=("--quiet",), seconds=0.6)
        self.assertEqual(terminal, "")


if __name__ == "__main__":
    main()
