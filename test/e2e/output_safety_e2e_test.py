"""What rlscope writes, as the root user of a shared machine: never through a
link another user planted (in --out, in a default-named directory, at a
report rewritten by `rlscope report`, at `calibrate --calibration`), never
into a FIFO or device, never shared between two runs given one --out, and
never readable by others (run directory 0700, files 0600). Traces do not
record the host name."""
import os
import re
import shutil
import socket
import stat
import subprocess
import unittest

from e2e_support import ARGS, main, run_rlscope, scratch_dir

NOBODY = 65534
TIMEOUT_S = 120


def as_root(test):
    if os.geteuid() != 0:
        test.skipTest("needs root: the attacks are on root's files")


class OutputSafety(unittest.TestCase):
    def victim(self):
        """A file of root's that nothing may write."""
        path = os.path.join(scratch_dir(self), "precious")
        with open(path, "w") as f:
            f.write("precious\n")
        return path

    def assert_untouched(self, victim):
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")

    def foreign_directory(self):
        """An empty, world-writable directory another user (nobody) made."""
        parent = scratch_dir(self)
        os.chmod(parent, 0o755)
        path = os.path.join(parent, "shared")
        os.mkdir(path)
        os.chown(path, NOBODY, NOBODY)
        os.chmod(path, 0o777)
        return path

    def test_links_planted_in_another_users_out_are_never_followed(self):
        as_root(self)
        victim = self.victim()
        out = self.foreign_directory()
        for name in ("report.txt", "report.html", "report.json", "calibration.json"):
            os.symlink(victim, os.path.join(out, name))
        result = run_rlscope("run", "--out", out, "--", "true", timeout=TIMEOUT_S)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("belongs to another user", result.stderr)
        self.assert_untouched(victim)

    def test_out_below_a_directory_others_can_change_is_refused(self):
        # Whoever may rename entries of a parent could move the run
        # directory away mid-run and put a link in its place.
        as_root(self)
        foreign = self.foreign_directory()
        world_writable = os.path.join(scratch_dir(self), "open")
        os.mkdir(world_writable)
        os.chmod(world_writable, 0o777)
        for parent, why in ((foreign, "belongs to another user"), (world_writable, "is writable by everyone")):
            with self.subTest(why=why):
                out = os.path.join(parent, "sub", "run")
                result = run_rlscope("run", "--out", out, "--", "true", timeout=TIMEOUT_S)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertIn(f"{parent} {why}", result.stderr)
                self.assertEqual(os.listdir(parent), [])
        # The sticky bit (as on /tmp) keeps others from renaming what is ours.
        os.chmod(world_writable, 0o1777)
        out = os.path.join(world_writable, "run")
        self.assertEqual(run_rlscope("run", "--quiet", "--out", out, "--", "true").returncode, 0)

    def test_out_that_is_a_link_is_refused(self):
        target = scratch_dir(self)
        link = os.path.join(scratch_dir(self), "out")
        os.symlink(target, link)
        result = run_rlscope("run", "--out", link, "--", "true", timeout=TIMEOUT_S)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"{link} is a symbolic link", result.stderr)
        self.assertEqual(os.listdir(target), [])

    def test_existing_empty_directory_of_ones_own_is_used(self):
        out = scratch_dir(self)  # mkdtemp: 0700, this user's.
        result = run_rlscope("run", "--quiet", "--out", out, "--", "true", timeout=TIMEOUT_S)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.exists(os.path.join(out, "report.json")))

    def test_report_rewrite_replaces_a_planted_link(self):
        victim = self.victim()
        out = os.path.join(scratch_dir(self), "run")
        self.assertEqual(run_rlscope("run", "--quiet", "--out", out, "--", "true").returncode, 0)
        for name in ("report.txt", "report.html", "report.json"):
            os.remove(os.path.join(out, name))
            os.symlink(victim, os.path.join(out, name))
        result = run_rlscope("report", out, timeout=TIMEOUT_S)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_untouched(victim)
        for name in ("report.txt", "report.html", "report.json"):
            self.assertTrue(stat.S_ISREG(os.lstat(os.path.join(out, name)).st_mode), name)
        # A FIFO at a report's name is refused, not opened (which would block).
        os.remove(os.path.join(out, "report.txt"))
        os.mkfifo(os.path.join(out, "report.txt"))
        result = run_rlscope("report", out, timeout=TIMEOUT_S)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("report.txt: is a FIFO (named pipe): not replaced", result.stderr)

    def test_default_names_are_unpredictable_and_private(self):
        cwd = scratch_dir(self)
        names = []
        for _ in range(2):
            result = subprocess.run([os.path.abspath(ARGS.rlscope), "run", "--quiet", "--", "true"], cwd=cwd, capture_output=True,
                                    text=True, timeout=TIMEOUT_S)
            self.assertEqual(result.returncode, 0, result.stderr)
            names = sorted(os.listdir(os.path.join(cwd, "rlscope-out")))
        self.assertEqual(len(names), 2, names)
        for name in names:
            self.assertRegex(name, r"^\d{8}-\d{6}-true-[a-z0-9]{6}$")
            mode = os.stat(os.path.join(cwd, "rlscope-out", name)).st_mode
            self.assertEqual(stat.S_IMODE(mode), 0o700, name)

    def test_run_files_are_private_whatever_the_umask(self):
        directory = scratch_dir(self)
        rules = os.path.join(directory, "mine.rules")
        with open(rules, "w") as f:
            f.write("operation mine Custom.work\n")
        calibration = os.path.join(directory, "calibration.json")
        with open(calibration, "w") as f:
            f.write('{"schema": "rlscope.calibration/1", "rlscope_version": "0.1.0", "machine": {}, '
                    '"costs": {"cuda_hook": {"ns": 1.0}}}\n')
        out = os.path.join(directory, "run")
        result = subprocess.run([ARGS.rlscope, "run", "--quiet", "--rules", rules, "--calibration", calibration,
                                 "--out", out, "--", "sh", "-c", "true"], capture_output=True, text=True,
                                timeout=TIMEOUT_S, preexec_fn=lambda: os.umask(0))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o700)
        checked = 0
        for root, dirs, files in os.walk(out):
            for name in dirs:
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode), 0o700, name)
            for name in files:
                path = os.path.join(root, name)
                self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, path)
                checked += 1
        names = {name for _, _, files in os.walk(out) for name in files}
        for expected in ("meta.json", "report.json", "report.txt", "report.html", "calibration.json",
                         "01-mine.rules"):
            self.assertIn(expected, names)
        self.assertTrue(any(name.endswith(".rlt") for name in names), names)

    def test_two_runs_on_one_out_never_share_it(self):
        out = os.path.join(scratch_dir(self), "run")
        runs = [subprocess.Popen([ARGS.rlscope, "run", "--quiet", "--out", out, "--", "sleep", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = []
        for run in runs:
            _, stderr = run.communicate(timeout=TIMEOUT_S)
            results.append((run.returncode, stderr))
        self.assertEqual(sorted(code for code, _ in results), [0, 1], results)
        refused = [stderr for code, stderr in results if code == 1][0]
        self.assertIn("already holds an rlscope run", refused)

    def test_calibrate_refuses_non_regular_targets(self):
        directory = scratch_dir(self)
        fifo = os.path.join(directory, "fifo")
        os.mkfifo(fifo)
        link = os.path.join(directory, "link")
        os.symlink(self.victim(), link)
        cases = [(fifo, "is a FIFO"), (directory, "is a directory"), (link, "is a symbolic link")]
        if os.geteuid() == 0:
            cases.append(("/dev/null", "is a device"))
        for path, what in cases:
            with self.subTest(path=path):
                result = run_rlscope("calibrate", "--quick", "--calibration", path, timeout=TIMEOUT_S)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertIn(f"{path}: {what}", result.stderr)
                self.assertIn("nothing was written", result.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertTrue(stat.S_ISLNK(os.lstat(link).st_mode))
        self.assertTrue(stat.S_ISCHR(os.lstat("/dev/null").st_mode))
        self.assertEqual(sorted(os.listdir(directory)), ["fifo", "link"])

    def test_traces_do_not_record_the_host_name(self):
        out = os.path.join(scratch_dir(self), "run")
        if os.geteuid() == 0 and shutil.which("unshare"):
            # A host name of its own, long enough to look for.
            host = b"rlscope-test-host-4f1c9a"
            result = subprocess.run(["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host.decode(),
                                     ARGS.rlscope, "run", "--quiet", "--out", out, "--", "true"],
                                    capture_output=True, text=True, timeout=TIMEOUT_S)
        else:
            host = socket.gethostname().encode()
            if len(host) < 4:
                self.skipTest("host name too short to look for")
            result = run_rlscope("run", "--quiet", "--out", out, "--", "true")
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in os.listdir(os.path.join(out, "trace")):
            with open(os.path.join(out, "trace", name), "rb") as f:
                self.assertNotIn(host, f.read(), name)

    def test_validate_output_is_private_and_never_through_links(self):
        target = scratch_dir(self)
        link = os.path.join(scratch_dir(self), "out")
        os.symlink(target, link)
        result = run_rlscope("validate", "-n", "1", "--warmup", "0", "--out", link, "--", "true", timeout=TIMEOUT_S)
        self.assertNotEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"{link} is a symbolic link", result.stderr)
        self.assertEqual(os.listdir(target), [])
        out = os.path.join(scratch_dir(self), "validate")
        result = subprocess.run([ARGS.rlscope, "validate", "-n", "1", "--warmup", "0", "--out", out, "--", "true"],
                                capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=lambda: os.umask(0))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o700)
        self.assertIn("validate.json", os.listdir(out))
        for root, dirs, files in os.walk(out):
            for name in dirs:
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode), 0o700, name)
            for name in files:
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode), 0o600, name)


if __name__ == "__main__":
    main()
