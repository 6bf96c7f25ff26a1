"""Bad input through the rlscope CLI: damaged, foreign and empty trace files,
broken meta.json, calibration files of another version, of wrong types or
with absurd numbers, and rules files with bad syntax. Each must end in one
message naming the file and what is wrong, a documented exit status, and
never a crash (signal, uncaught exception, sanitizer report) or a hang."""
import json
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import unittest

from e2e_support import ARGS, ProfiledRun, main, run_rlscope, scratch_dir

# Signs of a crash rather than an error message, in any output.
CRASH_SIGNS = ("terminate called", "Segmentation fault", "AddressSanitizer", "runtime error:", "LeakSanitizer",
               "Aborted", "core dumped")
REPORT_TIMEOUT_S = 60


def frames(data):
    """(offset, length) of each length-prefixed frame of a trace."""
    result, offset = [], 0
    while offset + 4 <= len(data):
        (length,) = struct.unpack_from("<I", data, offset)
        if offset + 4 + length > len(data):
            break
        result.append((offset, length))
        offset += 4 + length
    return result


def blocks(data):
    """(offset, size) of each block of a compressed trace (format/trace_blocks.h):
    an 8-byte file header, then per block two uint32 (compressed, stream
    sizes) and the compressed bytes."""
    assert data[:4] == b"RLTZ", data[:8]
    result, offset = [], 8
    while offset + 8 <= len(data):
        (compressed, _) = struct.unpack_from("<II", data, offset)
        if offset + 8 + compressed > len(data):
            break
        result.append((offset, 8 + compressed))
        offset += 8 + compressed
    return result


def problem_lines(report_text):
    """The '! ...' lines of the report's run-wide problems section."""
    section = report_text.split("problems with this run's data:\n", 1)
    return [line for line in section[1].splitlines() if line.startswith("  ! ")] if len(section) == 2 else []


class CopiedRunCase(unittest.TestCase):
    """One small real run, made once per class, whose files each test
    damages or replaces in a copy of its own."""

    options = ()  # Of `rlscope run`.

    @classmethod
    def setUpClass(cls):
        cls.holder = unittest.TestCase()
        cls.base = ProfiledRun(cls.holder, ["sh", "-c", "sleep 0.02"], options=cls.options)

    @classmethod
    def tearDownClass(cls):
        cls.holder.doCleanups()

    def copy_run(self):
        out = os.path.join(scratch_dir(self), "run")
        shutil.copytree(self.base.out, out)
        return out


class BadRunData(CopiedRunCase):
    """Damage to the frames themselves: the plain stream (the format before
    compressed blocks, still written with --uncompressed-trace)."""

    options = ("--uncompressed-trace",)

    def first_trace(self, out):
        trace_dir = os.path.join(out, "trace")
        return os.path.join(trace_dir, sorted(os.listdir(trace_dir))[0])

    def report(self, out, *options, codes=(0, 3)):
        result = run_rlscope("report", *options, out, timeout=REPORT_TIMEOUT_S)
        for sign in CRASH_SIGNS:
            self.assertNotIn(sign, result.stderr + result.stdout)
        self.assertIn(result.returncode, codes, result.stderr)
        return result

    def assert_one_problem(self, result, *needles):
        """Exactly one run-wide problem line holds every needle."""
        matching = [line for line in problem_lines(result.stdout) if all(n in line for n in needles)]
        self.assertEqual(len(matching), 1, (needles, result.stdout))
        return matching[0]

    def rewrite(self, path, data):
        with open(path, "wb") as f:
            f.write(data)

    def check_cuts(self, original, spans, cuts, where=""):
        """The first trace cut at each of `cuts`: whole at a boundary of
        `spans` ([(offset, size)]), else damaged there, named as the offset
        of the span it falls in (+ `where`)."""
        for cut in sorted(cuts):
            with self.subTest(cut=cut):
                out = self.copy_run()
                path = self.first_trace(out)
                self.rewrite(path, original[:cut])
                at_boundary = any(cut == offset for offset, _ in spans)
                result = self.report(out, codes=(0,) if at_boundary else (3,))
                if not at_boundary:
                    self.assert_one_problem(result, path,
                                            f"at byte offset {max(o for o, _ in spans if o <= cut)}{where}")
                    self.assertIn("some trace data was damaged", result.stderr)

    # Trace files.

    def test_trace_cut_at_every_kind_of_boundary(self):
        with open(self.first_trace(self.base.out), "rb") as f:
            original = f.read()
        spans = frames(original)
        self.assertGreater(len(spans), 1)
        cuts = set()
        for offset, length in spans[1:]:
            cuts.update({offset, offset + 2, offset + 4, offset + 4 + length // 2, offset + 4 + length - 1})
        self.check_cuts(original, spans, cuts)

    def test_trace_cut_inside_its_hello_is_not_a_trace(self):
        out = self.copy_run()
        path = self.first_trace(out)
        with open(path, "rb") as f:
            data = f.read()
        for cut in (1, 3, 4, 5, frames(data)[0][1]):
            self.rewrite(path, data[:cut])
            result = self.report(out, codes=(3,))
            self.assert_one_problem(result, path)

    def test_flipped_bytes_never_crash(self):
        with open(self.first_trace(self.base.out), "rb") as f:
            original = f.read()
        rng = random.Random(20261130)
        for trial in range(24):
            data = bytearray(original)
            for _ in range(rng.choice((1, 4, 16))):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            with self.subTest(trial=trial):
                out = self.copy_run()
                path = self.first_trace(out)
                self.rewrite(path, bytes(data))
                result = self.report(out)
                if result.returncode == 3:
                    self.assert_one_problem(result, path)

    def test_empty_and_foreign_files_are_named(self):
        not_a_trace = "not a readable rlscope trace: "
        cases = [
            ("empty trace file", b""),
            (not_a_trace + "corrupt frame length", json.dumps({"schema": "rlscope.report/1"}).encode()),
            # A FlatBuffers buffer of another schema: size prefix, root
            # offset, identifier "ZZZZ".
            (not_a_trace + "not an rlscope frame", struct.pack("<III", 16, 8, 0x5A5A5A5A) + b"\0" * 12),
            (not_a_trace + "corrupt frame length 4294967295", b"\xff\xff\xff\xff" + b"\0" * 64),
            (not_a_trace + "truncated frame header (3 of 4 bytes)", b"\x10\0\0"),
        ]
        for what, content in cases:
            with self.subTest(what=what):
                out = self.copy_run()
                path = self.first_trace(out)
                self.rewrite(path, content)
                result = self.report(out, codes=(3,))
                self.assertIn(what, self.assert_one_problem(result, path))

    def test_dump_of_damaged_traces(self):
        out = self.copy_run()
        path = self.first_trace(out)
        with open(path, "rb") as f:
            data = f.read()
        self.rewrite(path, data[:-3])
        result = run_rlscope("dump", path, timeout=REPORT_TIMEOUT_S)
        self.assertNotIn("terminate called", result.stderr)
        self.assertEqual(result.stderr.count("byte offset"), 1, result.stderr)
        self.rewrite(path, b"")
        result = run_rlscope("dump", path, timeout=REPORT_TIMEOUT_S)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{path}: empty trace file", result.stderr)

    def test_the_plain_format_is_what_was_written(self):
        with open(self.first_trace(self.base.out), "rb") as f:
            self.assertNotEqual(f.read(4), b"RLTZ")

    # meta.json.

    def test_meta_json_missing_garbled_or_mistyped(self):
        cases = {
            "missing": None,
            "not valid JSON": b"{\"schema\": \"rlscope.meta/1\", ",
            "unknown schema": json.dumps({"schema": 7}).encode(),
            "exit_code is not an integer": json.dumps({"schema": "rlscope.meta/1", "exit_code": "zero"}).encode(),
            "wall_ns is not an integer": json.dumps({"schema": "rlscope.meta/1", "wall_ns": 1e300}).encode(),
            "wall_ns = 18446744073709551615 is out of range": json.dumps(
                {"schema": "rlscope.meta/1", "wall_ns": 2**64 - 1}).encode(),
            "malformed field": json.dumps({"schema": "rlscope.meta/1", "command": [1, 2]}).encode(),
        }
        for what, content in cases.items():
            with self.subTest(what=what):
                out = self.copy_run()
                meta = os.path.join(out, "meta.json")
                if content is None:
                    os.remove(meta)
                else:
                    self.rewrite(meta, content)
                result = self.report(out, codes=(0,))
                line = self.assert_one_problem(result, meta)
                if content is not None:
                    self.assertIn(what, line)

    # Calibration files.

    def calibration_cases(self):
        good = {"schema": "rlscope.calibration/1", "rlscope_version": "0.1.0", "created_unix_s": 1,
                "machine": {"cpu": "x"}, "costs": {"cuda_hook": {"ns": 100.0}}}

        def variant(**changes):
            return json.dumps({**good, **changes}).encode()

        return {
            "calibration schema 'rlscope.calibration/99'": variant(schema="rlscope.calibration/99"),
            "calibration schema '12'": variant(schema=12),
            "not a JSON object": b"\x00\x01garbage",
            "'costs' is missing or not an object": variant(costs="lots"),
            "'machine' is missing or not an object": variant(machine=[1]),
            "ns is not a number": variant(costs={"cuda_hook": {"ns": "100"}}),
            "ns = 1e+300 is out of range": variant(costs={"cuda_hook": {"ns": 1e300}}),
            "repetitions = 1e+20 is out of range": variant(costs={"cuda_hook": {"ns": 1, "repetitions": 1e20}}),
            "created_unix_s is not an integer": variant(created_unix_s=1.5),
            "machine: 'cpu' is not a string": variant(machine={"cpu": 3}),
        }

    def test_bad_calibration_in_the_run_leaves_the_report_uncorrected(self):
        for what, content in self.calibration_cases().items():
            with self.subTest(what=what):
                out = self.copy_run()
                calibration = os.path.join(out, "calibration.json")
                self.rewrite(calibration, content)
                result = self.report(out, codes=(0,))
                self.assertEqual(result.stdout.count(f"uncorrected: {calibration}: "), 1, result.stdout)
                self.assertIn(what, result.stdout)

    def test_bad_calibration_named_on_the_command_line(self):
        for what, content in self.calibration_cases().items():
            with self.subTest(what=what):
                path = os.path.join(scratch_dir(self), "calibration.json")
                self.rewrite(path, content)
                result = run_rlscope("run", "--calibration", path, "--out", os.path.join(scratch_dir(self), "r"),
                                     "--", "true", timeout=REPORT_TIMEOUT_S)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stderr.count(path), 1, result.stderr)
                self.assertIn(what, result.stderr)

    # Rules files.

    def rules_cases(self):
        return {
            "unknown rule 'operaton'": b"operaton step *.step\n",
            "expected 'operation NAME QUALNAME-GLOB": b"# fine\noperation step\n",
            "unknown option 'when=x'": b"operation step *.step when=x\n",
            "unknown category 'GPU'": b"library GPU *libcuda*\n",
            "expected 'library CATEGORY PATH-GLOB'": b"library Backend\n",
            "unknown rule '\ufffd": b"\xff\xfe\x00binary\n",
        }

    def test_bad_rules_file_of_a_run_is_one_problem(self):
        for what, content in self.rules_cases().items():
            with self.subTest(what=what):
                out = self.copy_run()
                rules = os.path.join(out, "rules", "zz-user.rules")
                self.rewrite(rules, content)
                result = self.report(out, codes=(0,))
                self.assertIn(what.split("\ufffd")[0], self.assert_one_problem(result, f"{rules}:"))

    def test_bad_rules_file_given_to_run_is_a_usage_error(self):
        for what, content in self.rules_cases().items():
            with self.subTest(what=what):
                rules = os.path.join(scratch_dir(self), "bad.rules")
                self.rewrite(rules, content)
                result = run_rlscope("run", "--rules", rules, "--out", os.path.join(scratch_dir(self), "r"), "--",
                                     "true", timeout=REPORT_TIMEOUT_S)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stderr.count(f"{rules}:"), 1, result.stderr)
                self.assertIn(what.split("\ufffd")[0], result.stderr)
        directory = scratch_dir(self)
        result = run_rlscope("run", "--rules", directory, "--out", os.path.join(scratch_dir(self), "r"), "--", "true")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"{directory}: cannot read the rules file", result.stderr)


class BadCompressedTrace(CopiedRunCase):
    """Damage to a compressed trace (the default format): its blocks cut,
    flipped or missing."""

    first_trace = BadRunData.first_trace
    report = BadRunData.report
    assert_one_problem = BadRunData.assert_one_problem
    rewrite = BadRunData.rewrite
    check_cuts = BadRunData.check_cuts

    def original(self):
        with open(self.first_trace(self.base.out), "rb") as f:
            return f.read()

    def test_trace_cut_at_every_kind_of_block_boundary(self):
        original = self.original()
        spans = blocks(original)
        self.assertGreater(len(spans), 1)
        self.assertEqual(sum(size for _, size in spans) + 8, len(original))
        cuts = set()
        for offset, size in spans[1:]:
            cuts.update({offset, offset + 2, offset + 8, offset + size // 2, offset + size - 1})
        self.check_cuts(original, spans, cuts, " (of the file)")

    def test_trace_cut_inside_its_header_or_hello_is_not_a_trace(self):
        original = self.original()
        out = self.copy_run()
        path = self.first_trace(out)
        hello_end = sum(blocks(original)[0])
        for cut in (2, 4, 7, 8, 12, hello_end - 1):
            with self.subTest(cut=cut):
                self.rewrite(path, original[:cut])
                result = self.report(out, codes=(3,))
                self.assertIn("not a readable rlscope trace", self.assert_one_problem(result, path))

    def test_flipped_bits_in_a_block_are_found_never_misread(self):
        original = self.original()
        spans = blocks(original)
        whole = run_rlscope("dump", self.first_trace(self.base.out), timeout=REPORT_TIMEOUT_S)
        self.assertEqual(whole.returncode, 0, whole.stderr)
        rng = random.Random(20261202)
        for trial in range(16):
            data = bytearray(original)
            offset, size = spans[1 + trial % (len(spans) - 1)]
            data[offset + 8 + rng.randrange(size - 8)] ^= 1 << rng.randrange(8)
            with self.subTest(trial=trial):
                out = self.copy_run()
                path = self.first_trace(out)
                self.rewrite(path, bytes(data))
                result = self.report(out)
                dump = run_rlscope("dump", path, timeout=REPORT_TIMEOUT_S)
                if result.returncode == 3:
                    self.assertIn(f"at byte offset {offset} (of the file)", self.assert_one_problem(result, path))
                    self.assertEqual(dump.returncode, 3, dump.stderr)
                else:
                    # Only a bit zstd does not need (its window size, say)
                    # goes unnoticed: the checksum covers every byte of
                    # the stream, so what is read is what was written.
                    self.assertEqual(dump.stdout, whole.stdout)

    def test_dump_reads_both_formats_alike(self):
        plain = ProfiledRun(self, ["sh", "-c", "sleep 0.02"], options=("--uncompressed-trace",))
        outputs = []
        for out in (self.base.out, plain.out):
            result = run_rlscope("dump", self.first_trace(out), timeout=REPORT_TIMEOUT_S)
            self.assertEqual(result.returncode, 0, result.stderr)
            outputs.append(result.stdout)
        # Two runs: the same kinds of frames, in the same order.
        kinds = [[line.split()[1] for line in output.splitlines() if line.startswith("@")] for output in outputs]
        self.assertEqual(kinds[0][0], "hello")
        self.assertEqual(kinds[0][-1], "goodbye")
        self.assertEqual(kinds[1][0], "hello")
        self.assertEqual(kinds[1][-1], "goodbye")


class UnreadableInputs(CopiedRunCase):
    """Inputs that are no regular file (a FIFO, which blocked forever; /dev/zero,
    read without bound until the OOM killer came; a directory, which threw),
    too large, or unreadable. Every kind of input gets each; every command
    must end in time with one message naming the file."""

    def specials(self):
        """(what, make) pairs: make(path) puts that kind of file at path."""
        def fifo(path):
            os.mkfifo(path)

        def zero(path):
            # A device node of its own where possible: files of a run
            # directory that are links are refused before they are opened.
            try:
                os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers.
            except PermissionError:
                os.symlink("/dev/zero", path)

        def huge(path):
            with open(path, "wb") as f:
                f.truncate(64 << 20)  # Sparse: no disk used.
        return [("is a FIFO", fifo), ("is a directory", os.mkdir), ("is a device", zero),
                ("is larger than", huge)]

    def replace(self, path, make):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
        make(path)

    def rlscope(self, *args, codes):
        result = run_rlscope(*args, timeout=REPORT_TIMEOUT_S)  # A hang fails here.
        for sign in CRASH_SIGNS:
            self.assertNotIn(sign, result.stderr + result.stdout)
        self.assertIn(result.returncode, codes, result.stderr + result.stdout)
        return result

    def test_trace_file(self):
        for what, make in self.specials():
            if what == "is larger than":
                continue  # Traces have no size bound: they are read in windows.
            with self.subTest(what=what):
                out = self.copy_run()
                trace_dir = os.path.join(out, "trace")
                path = os.path.join(trace_dir, sorted(os.listdir(trace_dir))[0])
                self.replace(path, make)
                result = self.rlscope("report", out, codes=(3,))
                self.assertEqual(len([line for line in problem_lines(result.stdout)
                                      if path in line and what in line]), 1, result.stdout)
                result = self.rlscope("dump", path, codes=(1,))
                self.assertIn(f"{path}: cannot open: {what}", result.stderr)

    def test_meta_json(self):
        for what, make in self.specials():
            with self.subTest(what=what):
                out = self.copy_run()
                meta = os.path.join(out, "meta.json")
                self.replace(meta, make)
                result = self.rlscope("report", out, codes=(0,))
                self.assertEqual(len([line for line in problem_lines(result.stdout)
                                      if meta in line and what in line]), 1, result.stdout)
                self.assertIn("exit status and wall time unknown", result.stdout)
                self.assertNotIn("exit status 0", result.stdout)
                self.rlscope("export", out, "--csv", os.path.join(scratch_dir(self), "x.csv"), codes=(0,))
                self.rlscope("diff", out, self.base.out, codes=(0,))

    def test_meta_json_a_link_is_refused(self):
        out = self.copy_run()
        meta = os.path.join(out, "meta.json")
        target = os.path.join(scratch_dir(self), "elsewhere.json")
        shutil.move(meta, target)
        os.symlink(target, meta)
        result = self.rlscope("report", out, codes=(0,))
        self.assertIn(f"{meta}: cannot be read: is a symbolic link", result.stdout)

    def test_calibration(self):
        for what, make in self.specials():
            with self.subTest(what=what):
                path = os.path.join(scratch_dir(self), "calibration.json")
                make(path)
                result = self.rlscope("report", "--calibration", path, self.copy_run(), codes=(0,))
                self.assertIn(f"uncorrected: {path}: cannot be read: {what}", result.stdout)
                result = self.rlscope("run", "--calibration", path, "--out", os.path.join(scratch_dir(self), "r"),
                                      "--", "true", codes=(2,))
                self.assertIn(f"{path}: cannot be read: {what}", result.stderr)
                out = self.copy_run()
                in_run = os.path.join(out, "calibration.json")
                self.replace(in_run, make)
                result = self.rlscope("report", out, codes=(0,))
                self.assertIn(f"uncorrected: {in_run}: cannot be read: {what}", result.stdout)

    def test_rules(self):
        for what, make in self.specials():
            with self.subTest(what=what):
                path = os.path.join(scratch_dir(self), "mine.rules")
                make(path)
                result = self.rlscope("run", "--rules", path, "--out", os.path.join(scratch_dir(self), "r"), "--",
                                      "true", codes=(2,))
                self.assertIn(f"{path}: cannot read the rules file: {what}", result.stderr)
                out = self.copy_run()
                in_run = os.path.join(out, "rules", "99-mine.rules")
                make(in_run)
                result = self.rlscope("report", out, codes=(0,))
                self.assertEqual(len([line for line in problem_lines(result.stdout)
                                      if f"{in_run}: cannot read the rules file: {what}" in line]), 1, result.stdout)

    def test_nvidia_smi_samples(self):
        for what, make in self.specials():
            if what == "is larger than":
                continue  # Its bound (1 GiB) is not worth a test file.
            with self.subTest(what=what):
                out = self.copy_run()
                csv = os.path.join(out, "nvidia-smi.csv")
                make(csv)
                result = self.rlscope("report", out, codes=(0,))
                self.assertEqual(len([line for line in problem_lines(result.stdout)
                                      if f"cannot read {csv} ({what}" in line]), 1, result.stdout)

    def test_rules_path_with_a_colon(self):
        directory = scratch_dir(self)
        rules = os.path.join(directory, "run:12:00.rules")
        with open(rules, "w") as f:
            f.write("operation mine Custom.work\n")
        program = os.path.join(directory, "work.py")
        with open(program, "w") as f:
            f.write("class Custom:\n    def work(self):\n        return sorted(range(2000))\n"
                    "for _ in range(300):\n    Custom().work()\n")
        out = os.path.join(directory, "run")
        result = self.rlscope("run", "--quiet", "--rules", rules, "--out", out, "--", sys.executable, program,
                              codes=(0,))
        self.assertTrue(os.path.exists(os.path.join(out, "rules", "01-run:12:00.rules")))
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        self.assertIn("mine", {row["operation"] for row in report["rows"]}, result.stderr)
        self.assertEqual(problem_lines(self.rlscope("report", out, codes=(0,)).stdout), [])

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"), "needs root and setpriv")
    def test_unreadable_meta_json(self):
        # chmod 000 does not stop root: the report runs as nobody.
        out = self.copy_run()
        os.chmod(os.path.dirname(out), 0o755)
        for root, dirs, files in os.walk(out):
            for name in dirs + files + [""]:
                os.chown(os.path.join(root, name), 65534, 65534)
        meta = os.path.join(out, "meta.json")
        os.chmod(meta, 0)
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ARGS.rlscope,
                                 "report", out], capture_output=True, text=True, timeout=REPORT_TIMEOUT_S)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"{meta}: cannot be read: Permission denied", result.stdout)
        self.assertIn("exit status and wall time unknown", result.stdout)
        with open(os.path.join(out, "report.json")) as f:
            self.assertIsNone(json.load(f)["exit_code"])


if __name__ == "__main__":
    main()
