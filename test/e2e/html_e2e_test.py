#!/usr/bin/env python3
"""End-to-end tests of the HTML outputs: report.html of `rlscope run` and
`rlscope report`, and `rlscope diff --format html`. The NVTX client runs on
the fake CUDA runtime with the fake CUPTI, so GPU rows exist. Each page is
parsed (well-formed, nothing loaded from the network), its chart checked
against report.json, then rendered by headless Chromium: no script error,
the page's "rendered" marker set, the URL hash choosing the view, and a
screenshot that is not blank.

  html_e2e_test.py --rlscope BIN --client BIN --cupti LIB [--screenshots DIR]

Without Chromium the test prints why and exits with SKIP_CODE (ctest's
SKIP_RETURN_CODE).
"""
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, main, run_rlscope  # noqa: E402

SKIP_CODE = 77
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# A command-line argument with every character HTML must escape.
NASTY_ARG = '<b class="x">&amp;\'</b>'
VOID_ELEMENTS = {"meta", "br", "hr", "img", "input", "link"}  # SVG elements self-close (<line/>) or not
EXTERNAL = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:|//)|@import|url\(\s*["']?https?:""", re.I)


def find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class PageParser(html.parser.HTMLParser):
    """Checks that elements nest (every non-void element closed in order)
    and collects the chart segments' <title> texts and the body's attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.titles, self.body = [], [], [], {}
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.body = dict(attrs)
        if tag == "title" and self.stack and self.stack[-1] == "rect":
            self.in_title = True
            self.titles.append("")
        if tag not in VOID_ELEMENTS:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass  # <rect .../>: self-closed.

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag in VOID_ELEMENTS and (not self.stack or self.stack[-1] != tag):
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.in_title:
            self.titles[-1] += data


def parse_page(test, path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parser = PageParser()
    parser.feed(text)
    parser.close()
    test.assertEqual(parser.errors, [], path)
    test.assertEqual(parser.stack, [], path)
    test.assertIsNone(EXTERNAL.search(text), path)
    return text, parser


def png_is_not_blank(path):
    """True when the PNG decodes to more than a handful of distinct bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    pixels = zlib.decompress(idat)
    return len(set(pixels[::7])) > 20


class Browser:
    def __init__(self, path, scratch):
        self.path = path
        self.scratch = scratch

    def run(self, url, *options):
        # A fresh profile each time: a second browser on a profile still in
        # use hands its URL to the first one and exits with nothing done.
        profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=self.scratch)
        command = [self.path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                   *options, url]
        return subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=120)

    def dump_dom(self, url):
        return self.run(url, "--dump-dom")

    def screenshot(self, url, path):
        return self.run(url, f"--screenshot={path}", "--window-size=1400,2000", "--hide-scrollbars")


class Html(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="rlscope-e2e-html-")
        cls.shots = ARGS.screenshots or os.path.join(cls.scratch, "shots")
        os.makedirs(cls.shots, exist_ok=True)
        cls.browser = Browser(BROWSER, cls.scratch)
        cls.runs = []
        for name, steps in (("small", "10"), ("large", "30")):
            out = os.path.join(cls.scratch, name)
            # Through sh, so that the command line holds NASTY_ARG (as sh's $0).
            result = run_rlscope("run", "--quiet", "--cupti", ARGS.cupti, "--out", out, "--", "sh", "-c",
                                 'exec "$1" --steps "$2" --threads 2', NASTY_ARG, ARGS.client, steps)
            if result.returncode != 0:
                raise AssertionError(f"rlscope run failed ({result.returncode}): {result.stderr}")
            cls.runs.append(out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, True)

    def load_json(self, run):
        with open(os.path.join(run, "report.json")) as f:
            return json.load(f)

    def render(self, path, fragment="", shot=None):
        """Dumps the DOM of file://path#fragment; returns the parsed body's
        attributes and the dumped DOM. Takes a screenshot when `shot`."""
        url = "file://" + path + (("#" + fragment) if fragment else "")
        result = self.browser.dump_dom(url)
        self.assertEqual(result.returncode, 0, result.stderr)
        # Console output shows up as INFO:CONSOLE / ERROR:CONSOLE lines
        # ("Uncaught ReferenceError: ..."); the page logs nothing itself.
        self.assertNotIn(":CONSOLE", result.stderr)
        self.assertNotIn("Uncaught", result.stderr)
        parser = PageParser()
        parser.feed(result.stdout)
        self.assertEqual(parser.body.get("data-rendered"), "ok", result.stdout[-2000:])
        self.assertNotIn("data-script-error", parser.body)
        if shot:
            png = os.path.join(self.shots, shot)
            taken = self.browser.screenshot(url, png)
            self.assertEqual(taken.returncode, 0, taken.stderr)
            self.assertGreater(os.path.getsize(png), 20_000)
            self.assertTrue(png_is_not_blank(png), png)
        return parser.body, result.stdout

    def test_report_html_of_an_uncorrected_run(self):
        path = os.path.join(self.runs[0], "report.html")
        text, parser = parse_page(self, path)
        report = self.load_json(self.runs[0])
        self.assertFalse(report["corrected"])
        self.assertNotIn('data-show-view="', text)
        self.assertIn("Not corrected for rlscope", text)
        # The command is shown escaped, never as markup.
        self.assertNotIn(NASTY_ARG, text)
        self.assertIn("&lt;b class=&quot;x&quot;&gt;&amp;amp;&#39;&lt;/b&gt;", text)
        # Every (operation, resource, category) of the rows has its segment
        # in the main chart, with the exact ns (summed over processes).
        sums = {}
        for row in report["rows"]:
            key = (row["operation"], row["resource"], row["category"])
            sums[key] = sums.get(key, 0) + row["ns"]
        self.assertTrue(any(key[1] == "GPU" for key in sums), sums)
        titles = set(parser.titles)
        for (operation, resource, category), ns in sums.items():
            prefix = f"{operation} \u00b7 {resource} \u00b7 {category}: "
            matching = [t for t in titles if t.startswith(prefix)]
            self.assertTrue(matching, prefix)
            self.assertIn(f"= {ns} ns", matching[0])
        self.render(path, shot="report-not-corrected.png")

    def test_report_html_of_a_corrected_run_switches_by_hash(self):
        run = os.path.join(self.scratch, "corrected")
        shutil.copytree(self.runs[1], run)
        calibration = os.path.join(self.scratch, "calibration.json")
        costs = {site: {"ns": 150.0, "spread_ns": 10.0, "repetitions": 3, "events": 1000}
                 for site in ("cuda_hook", "nvtx_range", "native_process", "cupti:cudaLaunchKernel")}
        with open(calibration, "w") as f:
            json.dump({"schema": "rlscope.calibration/1", "rlscope_version": "test", "created_unix_s": 0,
                       "machine": {"cpu": "test", "kernel": "", "gpu": "", "driver": "", "cuda_runtime": ""},
                       "costs": costs}, f)
        result = run_rlscope("report", "--quiet", "--calibration", calibration, run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(self.load_json(run)["corrected"])
        path = os.path.join(run, "report.html")
        text, _ = parse_page(self, path)
        self.assertIn('data-show-view="uncorrected"', text)
        for fragment, shown, hidden in (("", "corrected", "uncorrected"), ("uncorrected", "uncorrected", "corrected"),
                                        ("corrected", "corrected", "uncorrected"), ("bogus", "corrected", "uncorrected")):
            shot = {"": "report-corrected.png", "uncorrected": "report-corrected-showing-uncorrected.png"}
            body, dom = self.render(path, fragment, shot=shot.get(fragment))
            self.assertEqual(body.get("data-shown-view"), shown, fragment)
            self.assertIn(f'<div data-view="{shown}">', dom, fragment)
            self.assertIn(f'<div data-view="{hidden}" hidden="">', dom, fragment)
            self.assertIn(f'data-show-view="{shown}" aria-pressed="true"', dom, fragment)

    def test_diff_format_html(self):
        path = os.path.join(self.scratch, "diff.html")
        result = run_rlscope("diff", "--format", "html", "-o", path, *self.runs)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")
        text, parser = parse_page(self, path)
        for label in ("small", "large"):
            self.assertIn(label, text)
        diff = json.loads(run_rlscope("diff", "--format", "json", *self.runs).stdout)
        for op in diff["operations"][:20]:
            self.assertIn(">" + op["operation"].replace("&", "&amp;").replace("<", "&lt;"), text)
        self.assertTrue(any(" \u00b7 large \u00b7 " in t for t in parser.titles), parser.titles[:5])
        stdout = run_rlscope("diff", "--format", "html", *self.runs)
        self.assertEqual(stdout.returncode, 0, stdout.stderr)
        self.assertEqual(stdout.stdout, text)
        unwritable = run_rlscope("diff", "--format", "html", "-o", os.path.join(self.scratch, "no", "d.html"),
                                 *self.runs)
        self.assertEqual(unwritable.returncode, 1)
        self.assertIn("cannot write", unwritable.stderr)
        self.render(path, shot="diff.png")


if __name__ == "__main__":
    BROWSER = find_browser()
    if BROWSER is None:
        print(f"SKIP: no headless browser found (looked for {', '.join(BROWSERS)} on PATH); "
              "scripts/install_deps.sh installs chromium")
        sys.exit(SKIP_CODE)
    main(extra_arguments=("--client", "--cupti"), optional_arguments=("--screenshots",))
