"""How often rlscope's inferred operations agree with a hand annotation, on
our own corpus programs (scripts/bench/inference_corpus/own), with the
metric of scripts/bench/inference_accuracy.py: one profiled run of the
annotated copy, its explicit operations (truth) against its inferred ones,
instant by instant on every thread, after start-up.

A program must reach CI_MIN_AGREEMENT (a few points under the goal, for a
busy machine's noise) unless EXPECTED_BELOW_GOAL names it; a named one must
still run and produce a report. No timing assertions: the
shares are of the run's own thread time, whatever the machine's load."""
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "bench"))
import e2e_support  # noqa: E402
import inference_accuracy as accuracy  # noqa: E402
from e2e_support import ARGS  # noqa: E402

# The goal: share of judged thread time on the annotated operation, and the
# most the inferred view may leave on no operation (the benchmark reports
# against it). CI holds unlisted programs to a floor a few points below:
# the shares are of time, and on a busy machine a short program's glue
# moves them by up to 5 points run to run (measured, scripts/bench/
# RESULTS.md), which must not fail the suite.
GOAL_AGREEMENT = 0.90
GOAL_MAX_NONE_SHARE = 0.05
CI_MIN_AGREEMENT = 0.85

# Programs that miss the goal with today's inference, and why. Shrink this as
# inference improves; a program not listed here that misses the goal fails.
EXPECTED_BELOW_GOAL = {}

OWN_PROGRAMS = [spec["name"] for spec in accuracy.LoadSpecs() if spec["source"] == "own"]


def _trace(threads):
    """A Chrome trace like `rlscope export --chrome` writes: {tid: [(begin_us,
    end_us, name, inferred)]} on pid 1."""
    events = []
    for tid, operations in threads.items():
        for begin, end, name, inferred in operations:
            event = {"ph": "X", "pid": 1, "tid": tid, "cat": "operation", "name": name, "ts": begin,
                     "dur": end - begin}
            if inferred:
                event["args"] = {"inferred": True}
            events.append(event)
    events.append({"ph": "X", "pid": 1, "tid": 1, "cat": "Python", "name": "Python", "ts": 0, "dur": 1000})
    return {"traceEvents": events}


class MetricTest(unittest.TestCase):
    def test_agreement_is_per_instant_innermost_after_startup(self):
        result = accuracy.Agreement(_trace({
            1: [(0, 10, "startup", False), (10, 110, "backprop", False), (40, 60, "replay", False),
                (0, 10, "backprop", True), (10, 40, "backprop", True), (40, 50, "inference", True),
                (60, 90, "inference", True), (62, 70, "backprop", True)],
            2: [(0, 5, "inference", True)],  # No truth on this thread: not judged.
        }))
        self.assertEqual(result["judged_ns"], 100_000)
        self.assertEqual(result["threads"], 1)
        # backprop agrees on 10-40 and 62-70; replay (40-60) never; none on 50-60 and 90-110.
        self.assertAlmostEqual(result["agreement"], 0.38)
        self.assertAlmostEqual(result["none_share"], 0.30)
        self.assertEqual(result["confusion"]["replay"], {"inference": 10_000, "(none)": 10_000})

    def test_agreement_matches_a_nanosecond_by_nanosecond_count(self):
        def innermost(intervals, t):
            open_ = [i for i in intervals if i[0] <= t < i[1]]
            return max(open_, key=lambda i: (i[0], -i[1]))[2] if open_ else None

        def nested(rng, lo, hi, depth):
            out, t = [], lo
            while t < hi and rng.random() < 0.8:
                begin = rng.randint(t, hi)
                end = rng.randint(begin, hi)
                if end > begin:
                    out.append((begin, end, rng.choice(["a", "b", "startup"])))
                    out += nested(rng, begin, end, depth + 1) if depth < 3 else []
                t = end + rng.randint(0, 3)
            return out

        for seed in range(200):
            rng = random.Random(seed)
            truth = nested(rng, 0, 200, 0)
            inferred = []
            for _ in range(rng.randint(0, 12)):
                begin = rng.randint(0, 200)
                inferred.append((begin, begin + rng.randint(1, 60), rng.choice("abc")))
            ns = 1e-3  # Chrome trace times are microseconds.
            result = accuracy.Agreement(_trace({1: [(b * ns, e * ns, n, False) for b, e, n in truth]
                                                + [(b * ns, e * ns, n, True) for b, e, n in inferred]}))
            counts = {"judged": 0, "agree": 0, "none": 0}
            for t in range(300):
                want = innermost(truth, t)
                if want in (None, "startup"):
                    continue
                got = innermost(inferred, t)
                counts["judged"] += 1
                counts["agree"] += got == want
                counts["none"] += got is None
            self.assertEqual(result["judged_ns"], counts["judged"], seed)
            if counts["judged"]:
                self.assertAlmostEqual(result["agreement"], counts["agree"] / counts["judged"], msg=seed)
                self.assertAlmostEqual(result["none_share"], counts["none"] / counts["judged"], msg=seed)

    def test_annotation_wraps_statements_and_runs(self):
        source = "import sys\nx = 0\nfor i in range(3):\n    x += i\n    if x:\n        x += 1\nprint(x)\n"
        blocks = [{"first_line": 1, "last_line": 2, "operation": "startup"},
                  {"first_line": 4, "last_line": 6, "operation": "backprop"},
                  {"first_line": 5, "last_line": 6, "operation": "replay"}]
        annotated = accuracy.AnnotateSource(source, blocks, "prog.py")
        self.assertIn('    with rlscope.operation("backprop"):\n        x += i\n'
                      '        with rlscope.operation("replay"):\n            if x:\n', annotated)
        stub = "import contextlib\nclass rlscope:\n    operation = staticmethod(lambda name: contextlib.nullcontext())\n"
        run = subprocess.run([sys.executable, "-c", stub + annotated.replace("import rlscope  #", "#")],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual((run.returncode, run.stdout), (0, "5\n"), run.stderr)

    def test_annotation_refuses_changed_lines_and_partial_statements(self):
        source = "a = 1\nif a:\n    b = 2\n"
        with self.assertRaisesRegex(accuracy.SpecError, "sha256 differs"):
            accuracy.AnnotateSource(source, [{"first_line": 1, "last_line": 1, "operation": "x",
                                              "sha256": accuracy.LineHash(["a = 2\n"])}], "p.py")
        with self.assertRaisesRegex(accuracy.SpecError, "not a run of complete statements"):
            accuracy.AnnotateSource(source, [{"first_line": 1, "last_line": 2, "operation": "x"}], "p.py")

    def test_expected_failures_name_corpus_programs(self):
        self.assertEqual(sorted(set(EXPECTED_BELOW_GOAL) - set(OWN_PROGRAMS)), [])

    def test_compile_is_reported_not_judged(self):
        result = accuracy.Agreement(_trace({
            1: [(0, 100, "backprop", False), (10, 60, "compile", False),
                (0, 100, "backprop", True), (10, 30, "compile", True)],
        }))
        # The 50 us compiling inside the backprop block are left out,
        # whatever the inferred view says there (backprop on 30-60); the
        # rest (0-10, 60-100) is judged, and agrees.
        self.assertEqual(result["compile_truth_ns"], 50_000)
        self.assertEqual(result["judged_ns"], 50_000)
        self.assertAlmostEqual(result["agreement"], 1.0)

    def test_missing_modules_are_named(self):
        spec = {"requires": ["json", "no_such_module_rlscope_test"]}
        self.assertEqual(accuracy.MissingModules(spec, sys.executable), ["no_such_module_rlscope_test"])
        self.assertEqual(accuracy.MissingModules({}, sys.executable), [])


class CorpusTest(unittest.TestCase):
    """One test per own program (added below), so a failure names it."""

    def check_program(self, name):
        spec = next(spec for spec in accuracy.LoadSpecs([name]))
        missing = accuracy.MissingModules(spec, ARGS.python)
        if missing:  # JAX's programs here: Debian packages no JAX.
            self.skipTest(f"{ARGS.python} cannot import {', '.join(missing)}")
        # A share of thread time moves with the machine's load: a thread
        # preempted inside a stretch the inference gets wrong makes that
        # stretch longer (seen: own_threaded_logger's (none) 0.9-1.4 % quiet,
        # 5.2 % beside two CPU hogs). A program under CI's floor is profiled
        # once more; a systematic miss misses both times.
        for attempt in range(2):
            workdir = e2e_support.scratch_dir(self)
            result = accuracy.ProfileProgram(spec, os.path.abspath(ARGS.rlscope), "", workdir, timeout=600,
                                             python=ARGS.python)
            self.assertTrue(result["report"]["processes"], "report.json lists no process")
            self.assertGreater(result["judged_ns"], 0, "no judged thread time: the annotation was not recorded")
            # Records lost on a busy machine leave holes whose time no
            # view can judge: said, so a miss can be told from them.
            lost = sum(process.get("dropped_events", 0) for process in result["report"]["processes"])
            line = (f"{name}: agreement {result['agreement']:.1%}, (none) {result['none_share']:.1%}, "
                    f"{result['judged_ns'] / 1e9:.2f} thread s{f', {lost} records lost' if lost else ''}; "
                    f"{accuracy.FormatConfusion(result['confusion'])}")
            print("\n" + line, file=sys.stderr)
            if name in EXPECTED_BELOW_GOAL or accuracy.MeetsGoal(result, CI_MIN_AGREEMENT, GOAL_MAX_NONE_SHARE):
                break
            print(f"{name}: under CI's floor in attempt {attempt + 1}", file=sys.stderr)
        if name in EXPECTED_BELOW_GOAL:
            if accuracy.MeetsGoal(result, GOAL_AGREEMENT, GOAL_MAX_NONE_SHARE):
                print(f"{name} now meets the goal: remove it from EXPECTED_BELOW_GOAL", file=sys.stderr)
            return
        if not accuracy.MeetsGoal(result, GOAL_AGREEMENT, GOAL_MAX_NONE_SHARE):
            print(f"{name} is below the goal, above CI's floor", file=sys.stderr)
        self.assertTrue(accuracy.MeetsGoal(result, CI_MIN_AGREEMENT, GOAL_MAX_NONE_SHARE),
                        f"below CI's floor (agreement >= {CI_MIN_AGREEMENT:.0%}, (none) <= "
                        f"{GOAL_MAX_NONE_SHARE:.0%}): {line}")


for _name in OWN_PROGRAMS:
    setattr(CorpusTest, f"test_{_name}", lambda self, name=_name: self.check_program(name))


if __name__ == "__main__":
    e2e_support.main(extra_arguments=["--python"])
