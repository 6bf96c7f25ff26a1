"""Every command of README.md runs as the README says, in order, and does
what the README says it does; and every relative link of README.md and
docs/*.md leads to a file.

Convention: a command is a line of a ```sh block of README.md (blank lines
and lines starting with `#` are not). Output is shown in ```text blocks and
code in ```python blocks; neither is run. Commands named in prose (inline
code) are not run either: a command the reader is meant to type goes into
a ```sh block.

The commands run one after the other, as a reader on a fresh machine would
type them: each in bash, in one scratch directory, with HOME a scratch home
(so `~/.local` and the calibration cache are the test's own), and with the
variables that earlier `export` lines set. Paths relative to the checkout
(`scripts/...`) are made absolute; `scripts/demo.sh` builds into a tree of
this test's own (--demo-build, never the tree under test: the demo
configures without tests; kept, so only the first run builds it, in a few
minutes); a few commands get smaller arguments (SMALLER_ARGUMENTS): later
runs take about half a minute. The calibration the demo would make (a
minute or more, refused on a busy machine) is made quick beforehand with
the rlscope under test (--rlscope). Every command must
also have an expectation on its result (EXPECTATIONS), or be listed in
NOT_RUN with the reason: a command the README gains that is in neither
fails the test.

The demo's packages must be installed (CI's scripts/test.sh installs them
all first): otherwise the demo would ask apt for them, which a test cannot.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import e2e_support
from e2e_support import ARGS

# Commands a test cannot run, with the reason.
NOT_RUN = {
    # What CI runs: it builds every tree and runs every test, this one
    # included (and needs apt for the packages it installs).
    "scripts/test.sh",
}

# (pattern, replacement) applied to a command before it runs: the same
# command with arguments small enough for a test.
SMALLER_ARGUMENTS = [
    # The demo profiles 10000 steps by default; 300 still reach update().
    (r"^scripts/demo\.sh$", "scripts/demo.sh --steps 300"),
    # The quick-start run: fewer steps, same report.
    (r"--steps \d+", "--steps 300"),
    # A full calibration sweep takes a minute or more; the quick one checks
    # the same command line, and a busy test machine must not refuse it.
    (r"^rlscope calibrate$", "rlscope calibrate --quick --accept-uncertain"),
]


def _output_contains(text):
    def check(test, result, scratch):
        test.assertIn(text, result.stdout + result.stderr)
    return check


def _file_exists(path):
    def check(test, result, scratch):
        full = os.path.join(scratch.work, path)
        test.assertTrue(os.path.isfile(full) and os.path.getsize(full) > 0, f"{full} missing or empty")
    return check


def _all(*checks):
    def check(test, result, scratch):
        for c in checks:
            c(test, result, scratch)
    return check


def _installed(test, result, scratch):
    for name in ("bin/rlscope", "lib/librlscope_preload.so", "share/rlscope/module/rlscope/__init__.py"):
        path = os.path.join(scratch.home, ".local", name)
        test.assertTrue(os.path.isfile(path), f"cmake --install left no {path}")


def _rlscope_on_path(test, result, scratch):
    found = scratch.shell("command -v rlscope").stdout.strip()
    test.assertEqual(found, os.path.join(scratch.home, ".local", "bin", "rlscope"))


def _module_importable(test, result, scratch):
    imported = scratch.shell("/usr/bin/python3 -c 'import rlscope; print(rlscope.__file__)'")
    test.assertEqual(imported.returncode, 0, imported.stderr)
    test.assertIn(os.path.join(scratch.home, ".local", "share", "rlscope", "module"), imported.stdout)


# What each command must have done, besides exiting 0: the first pattern
# that matches the command (as the README writes it) applies.
EXPECTATIONS = [
    (r"^scripts/demo\.sh", _output_contains("the answer:")),
    (r"^cmake --install build --prefix ~/\.local$", _installed),
    (r"^export PATH=", _rlscope_on_path),
    (r"^rlscope run --out ppo-run ", _all(_output_contains("the answer:"), _file_exists("ppo-run/report.html"))),
    (r"^rlscope report ppo-run$", _output_contains("the answer:")),
    (r"^rlscope export ppo-run --perfetto ppo\.perfetto$", _file_exists("ppo.perfetto")),
    (r"^rlscope calibrate", _output_contains("rlscope calibrate: wrote")),
    (r"^export PYTHONPATH=", _module_importable),
]


# Lines of the quick start's report that the README's excerpt shows, and
# that the report printed by the quick-start command must have too (a
# report that changes its layout makes the excerpt stale).
EXCERPT_MARKERS = [
    "rlscope report: ",
    "the answer:\n",
    "\n  - By level, the loop is ",
    "\n  - Your most expensive line: ",
    "\n  Corrected for rlscope's overhead: about ",
    "\n  (all) ",
    # Not the Wait line: it shows only where some thread blocked, which a
    # short run need not do.
]


def readme_commands(readme_text):
    commands, in_sh = [], False
    for line in readme_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_sh = not in_sh and stripped == "```sh"
            continue
        if in_sh and stripped and not stripped.startswith("#"):
            commands.append(stripped)
    return commands


def relative_links(markdown_text):
    """The [text](target) links that lead into the tree, as (file, anchor):
    file "" for an anchor in the same file, anchor "" for none."""
    links = []
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown_text):
        if re.match(r"^[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        links.append((path, anchor))
    return links


def heading_anchors(markdown_text):
    """The anchors GitHub gives a file's headings: lower case, punctuation
    dropped, spaces made dashes."""
    anchors, in_code = set(), False
    for line in markdown_text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"^#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


class Scratch:
    """The reader's machine: a home, a working directory, the variables
    earlier `export` lines set."""

    def __init__(self, test):
        self.root = tempfile.mkdtemp(prefix="rlscope-e2e-readme-")
        test.addCleanup(shutil.rmtree, self.root, True)
        self.home = os.path.join(self.root, "home")
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.home)
        os.makedirs(self.work)
        self.exports = os.path.join(self.root, "exports.sh")
        open(self.exports, "w").close()
        self.env = dict(os.environ, HOME=self.home, XDG_CACHE_HOME=os.path.join(self.home, ".cache"),
                        RLSCOPE_BUILD_DIR=ARGS.demo_build)
        # Not inherited from the tree under test: the README's own steps
        # say where rlscope and its module come from.
        self.env.pop("PYTHONPATH", None)
        self.env.pop("RLSCOPE_PRELOAD", None)
        if shutil.which("ccache"):
            # The demo's build: compiled once, then cached.
            self.env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
            self.env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")

    def shell(self, command, timeout=120):
        script = f"source {shlex.quote(self.exports)}\n{command}\n"
        return subprocess.run(["bash", "-c", script], cwd=self.work, env=self.env, capture_output=True, text=True,
                              errors="replace", timeout=timeout)

    def remember_export(self, command):
        with open(self.exports, "a") as f:
            f.write(command + "\n")


def runnable(command):
    """The command as the test runs it: smaller arguments, checkout paths
    absolute, the demo's tree for `build`."""
    for pattern, replacement in SMALLER_ARGUMENTS:
        command = re.sub(pattern, replacement, command)
    command = re.sub(r"(^|\s)scripts/", lambda m: m.group(1) + os.path.join(ARGS.source, "scripts") + "/", command)
    command = re.sub(r"^cmake --install build ", f"cmake --install {shlex.quote(ARGS.demo_build)} ", command)
    return command


def expectation(command):
    for pattern, check in EXPECTATIONS:
        if re.search(pattern, command):
            return check
    return None


class ReadmeCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The commands run elsewhere: paths given relative to here would not.
        for name in ("rlscope", "source", "demo_build"):
            setattr(ARGS, name, os.path.abspath(getattr(ARGS, name)))
        with open(os.path.join(ARGS.source, "README.md")) as f:
            cls.readme = f.read()
        cls.commands = readme_commands(cls.readme)

    def test_readme_stays_a_first_page(self):
        # Reference goes into docs/; the README is what a newcomer reads.
        self.assertLessEqual(len(self.readme.splitlines()), 200, "README.md: move detail into docs/")

    def test_every_command_is_run_or_listed(self):
        self.assertTrue(self.commands, "README.md has no ```sh block")
        for command in self.commands:
            if command in NOT_RUN:
                continue
            self.assertIsNotNone(expectation(command),
                                 f"README command {command!r} is neither checked (EXPECTATIONS in this test) "
                                 "nor listed in NOT_RUN with the reason")
        for listed in NOT_RUN:
            self.assertIn(listed, self.commands, f"NOT_RUN lists {listed!r}, which the README no longer has")

    def test_commands_run_in_order(self):
        scratch = Scratch(self)
        # The demo calibrates a machine without a calibration; a quick one
        # made first stands in (the fingerprint is the same: same machine,
        # same rlscope version).
        seeded = subprocess.run([ARGS.rlscope, "calibrate", "--quick", "--accept-uncertain", "--python",
                                 "/usr/bin/python3"], env=scratch.env, capture_output=True, text=True, timeout=300)
        self.assertEqual(seeded.returncode, 0, seeded.stderr)
        demo_out = os.path.join(ARGS.source, "rlscope-out")
        before = set(os.listdir(demo_out)) if os.path.isdir(demo_out) else set()
        outputs = {}
        try:
            for command in self.commands:
                if command in NOT_RUN:
                    continue
                check = expectation(command)
                self.assertIsNotNone(check, f"no expectation for {command!r}")
                with self.subTest(command=command):
                    began = time.monotonic()
                    result = scratch.shell(runnable(command), timeout=900)  # the demo's first build: minutes
                    print(f"readme: {runnable(command)}: exit {result.returncode}, "
                          f"{time.monotonic() - began:.1f} s", file=sys.stderr)
                    self.assertEqual(result.returncode, 0,
                                     f"{runnable(command)}\nstdout:\n{result.stdout[-3000:]}\n"
                                     f"stderr:\n{result.stderr[-3000:]}")
                    if command.startswith("export "):
                        scratch.remember_export(runnable(command))
                    check(self, result, scratch)
                    outputs[command] = result.stderr
            self.check_report_excerpt(outputs)
        finally:
            # The demo writes its run into the checkout's rlscope-out/.
            if os.path.isdir(demo_out):
                for name in set(os.listdir(demo_out)) - before:
                    shutil.rmtree(os.path.join(demo_out, name), True)

    def check_report_excerpt(self, outputs):
        """The report the README shows is what its quick-start command
        prints: the same lines start the same way."""
        runs = [c for c in self.commands if c.startswith("rlscope run ")]
        self.assertTrue(runs, "README.md has no quick-start `rlscope run` command")
        quick_start = runs[0]
        if quick_start not in outputs:
            return  # it failed: reported above
        excerpt = re.search(r"```text\n(.*?)```", self.readme, re.S).group(1)
        printed = outputs[quick_start]
        self.assertIn("rlscope report: /usr/bin/python3 scripts/workloads/ppo.py", excerpt)
        for marker in EXCERPT_MARKERS:
            self.assertIn(marker, excerpt, "README's report excerpt")
            # Up to the marker's last word: the report wraps what follows
            # it where the program's path is long (a checkout under a
            # longer folder put the line's location on the next line).
            self.assertIn(marker.rstrip(" "), printed, f"the report of {quick_start!r}")

    def test_relative_links_resolve(self):
        docs = os.path.join(ARGS.source, "docs")
        files = [os.path.join(ARGS.source, "README.md"), os.path.join(ARGS.source, "CHANGELOG.md")]
        files += [os.path.join(docs, name) for name in sorted(os.listdir(docs)) if name.endswith(".md")]
        for path in files:
            with open(path) as f:
                text = f.read()
            name = os.path.relpath(path, ARGS.source)
            for link, anchor in relative_links(text):
                target = os.path.normpath(os.path.join(os.path.dirname(path), link)) if link else path
                self.assertTrue(os.path.exists(target), f"{name}: link {link!r} leads to no file")
                if anchor and target.endswith(".md"):
                    with open(target) as f:
                        self.assertIn(anchor, heading_anchors(f.read()),
                                      f"{name}: link {link}#{anchor}: no such heading in {link or name}")


class Extraction(unittest.TestCase):
    """The test's own parsing, on a made-up README."""

    def test_only_sh_blocks_are_commands(self):
        text = "a `rlscope x`\n```sh\nrlscope run -- a\n\n# a comment\n```\n```text\nrlscope: out\n```\n" \
               "```python\nimport rlscope\n```\n```sh\nscripts/demo.sh\n```\n"
        self.assertEqual(readme_commands(text), ["rlscope run -- a", "scripts/demo.sh"])

    def test_a_stray_command_fails(self):
        self.assertIsNone(expectation("rlscope frobnicate ppo-run"))
        self.assertNotIn("rlscope frobnicate ppo-run", NOT_RUN)

    def test_links(self):
        self.assertEqual(relative_links("[a](docs/x.md#y) [b](https://x.org) [c](#z) ![d](img/p.png)"),
                         [("docs/x.md", "y"), ("", "z"), ("img/p.png", "")])

    def test_anchors(self):
        self.assertEqual(heading_anchors("# A b\n## report.json\n```\n# not\n```\n### Perfetto: --perfetto FILE\n"),
                         {"a-b", "reportjson", "perfetto---perfetto-file"})


if __name__ == "__main__":
    e2e_support.main(extra_arguments=("--source", "--demo-build"))
