#!/usr/bin/env python3
"""End-to-end tests of operations inferred from what code does, on a script
written with none of rlscope's naming conventions
(python_programs/unconventional_rl.py): its env, network and buffer are
found by class hierarchy, its forward passes are told apart by whether they
are part of a training step, and its glue is attributed. Ground truth: the
program counts what it did, in the same run.

  semantic_inference_e2e_test.py --rlscope BIN --python PYTHON --share DIR
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "unconventional_rl.py")
OPAQUE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_programs", "opaque_phases.py")


def has_torch():
    probe = subprocess.run([ARGS.python, "-c", "import torch"], capture_output=True, timeout=120)
    return probe.returncode == 0


def instances(process):
    """{operation: instances} as the report counts them (transition rows)."""
    counted = {}
    for row in process["transitions"]:
        counted[row["operation"]] = max(counted.get(row["operation"], 0), row["operation_instances"])
    return counted


def time_by_operation(report, pid):
    totals = {}
    for row in report["rows"]:
        if row["process"] == pid and row["resource"] != "GPU":
            totals[row["operation"]] = totals.get(row["operation"], 0) + row["ns"]
    return totals


class UnconventionalScript(unittest.TestCase):
    def setUp(self):
        if not has_torch():
            self.skipTest(f"{ARGS.python} cannot import torch")

    def profile(self, *args):
        run = ProfiledRun(self, [ARGS.python, PROGRAM, *args], options=("--quiet",))
        did = json.loads(run.result.stdout.strip().splitlines()[-1])
        (process,) = run.report["processes"]
        return run, process, did

    def check_glue_is_attributed(self, run, process):
        # After start-up, every moment of the script's thread is in some
        # operation: the loop's glue belongs to the operation it serves.
        totals = time_by_operation(run.report, process["pid"])
        self.assertEqual(totals.get("(none)", 0), 0, totals)
        self.assertGreater(totals.get("startup", 0), 0, totals)

    def test_off_policy_training_forwards_are_backprop_and_acting_is_inference(self):
        run, process, did = self.profile("dqn", "1200")
        counted = instances(process)
        # Every greedy action is one inference; the target network's
        # forward pass under no_grad and the online one inside the training
        # step are not (they are the training step's).
        self.assertEqual(counted.get("inference"), did["greedy"], counted)
        # Pole derives from the script's EnvBase: its steps and resets.
        self.assertEqual(counted.get("simulation"), did["env_steps"] + did["resets"], counted)
        # Experience.put / .draw: found by the class's name, not *Buffer.*.
        self.assertEqual(counted.get("replay"), did["buffer_calls"], counted)
        # One training step each, the inline forward passes, loss, backward
        # and optimizer step together.
        self.assertEqual(counted.get("backprop"), did["train_steps"], counted)
        self.check_glue_is_attributed(run, process)

    def test_on_policy_rollout_is_inference_and_update_is_backprop(self):
        run, process, did = self.profile("ppo", "12")
        counted = instances(process)
        # Brain.think under no_grad while acting: a user nn.Module method
        # with a name no rule knows.
        self.assertEqual(counted.get("inference"), did["greedy"], counted)
        self.assertEqual(counted.get("simulation"), did["env_steps"] + did["resets"], counted)
        # Each update phase (epochs of minibatches, Brain.judge, backward,
        # clipping, optimizer step) is one training step.
        self.assertEqual(counted.get("backprop"), did["train_steps"], counted)
        self.assertNotIn("replay", counted)
        self.check_glue_is_attributed(run, process)

    def test_a_policy_distribution_evaluated_after_the_env_step_is_the_policy_s(self):
        # A2C inline: dist.log_prob(action) and dist.entropy() after
        # env.step are the policy's computation (acting, or on a rollout's
        # last step the training step's), never the env step's.
        run, process, did = self.profile("a2c", "40")
        counted = instances(process)
        self.assertEqual(counted.get("simulation"), did["env_steps"] + did["resets"], counted)
        self.assertEqual(counted.get("backprop"), did["train_steps"], counted)
        # Compared by the native calls each line made, not by their time:
        # the lines add up to a few milliseconds, which one preemption of a
        # busy machine (or a sanitizer build) can outweigh.
        evaluated = {}
        for line in process["python_lines"]:
            if line["source"].strip() in ("log_probs.append(dist.log_prob(action))", "entropies.append(dist.entropy())"):
                evaluated[line["operation"]] = evaluated.get(line["operation"], 0) + line["calls"]
        self.assertTrue(evaluated, process["python_lines"])
        self.assertEqual(set(evaluated) - {"inference", "backprop"}, set(), evaluated)
        # Acting is 4 of a rollout's 5 steps; the training step takes at
        # most the last one's.
        self.assertGreaterEqual(evaluated.get("inference", 0), 3 * evaluated.get("backprop", 0), evaluated)
        self.check_glue_is_attributed(run, process)

    def test_lines_are_the_users_own_with_their_text(self):
        run, process, did = self.profile("dqn", "400")
        lines = process["python_lines"]
        # The line in the script that called into torch, not torch's own
        # (linear.py's Linear.forward), with its text.
        backward = [line for line in lines if line["source"] == "loss.backward()"]
        self.assertEqual(len(backward), 1, lines)
        self.assertEqual(backward[0]["operation"], "backprop")
        self.assertTrue(backward[0]["user_code"])
        self.assertEqual(backward[0]["function"], "dqn")
        self.assertTrue(backward[0]["file"].endswith("unconventional_rl.py"), backward[0])
        # After start-up every line with native time is the script's: torch
        # and numpy were only reached through it.
        later = [line for line in lines if line["operation"] not in ("startup", "teardown")]
        self.assertTrue(later)
        self.assertTrue(all(line["user_code"] for line in later), [l for l in later if not l["user_code"]])
        # The library lines beneath are kept beside them.
        library = process["python_library_lines"]
        self.assertTrue(any("/torch/" in line["code"] and not line["user_code"] for line in library), library)
        with open(os.path.join(run.out, "report.txt")) as f:
            self.assertIn("dqn: loss.backward()", f.read())

class UnmatchedTimeExplained(unittest.TestCase):
    """Bad input: a program whose operations cannot be inferred gets its
    (none) explained, with rule lines that, pasted, name its phases."""

    def setUp(self):
        probe = subprocess.run([ARGS.python, "-c", "import numpy"], capture_output=True, timeout=120)
        if probe.returncode != 0:
            self.skipTest(f"{ARGS.python} cannot import numpy")

    def test_the_largest_unmatched_function_comes_with_a_rule_that_names_it(self):
        run = ProfiledRun(self, [ARGS.python, OPAQUE, "150"], options=("--quiet",))
        (process,) = run.report["processes"]
        unmatched = process["unmatched"]
        self.assertGreater(unmatched["none_ns"], 0.5 * process["traced_thread_ns"], unmatched)
        first = unmatched["functions"][0]
        self.assertEqual((first["function"], os.path.basename(first["file"]), first["user_code"]),
                         ("Kiln.fire", os.path.basename(OPAQUE), True), unmatched)
        # Its native time is at most what the program's own clock saw in it.
        fire_ns = json.loads(run.result.stdout.strip().splitlines()[-1])["fire_s"] * 1e9
        self.assertLessEqual(first["ns"], fire_ns)
        self.assertGreater(first["ns"], 0.3 * fire_ns)
        with open(os.path.join(run.out, "report.txt")) as f:
            text = f.read()
        self.assertIn("is in no operation", text)
        self.assertIn(first["rule"], text)
        # Pasted with an operation chosen, the rule names the phase.
        rules = os.path.join(run.dir, "mine.rules")
        with open(rules, "w") as f:
            f.write(first["rule"].replace("OPERATION", "firing") + "\n")
        named = ProfiledRun(self, [ARGS.python, OPAQUE, "150"], options=("--quiet", "--rules", rules))
        (process,) = named.report["processes"]
        totals = time_by_operation(named.report, process["pid"])
        self.assertGreater(totals.get("firing", 0), first["ns"] * 0.5, totals)
        self.assertLess(totals.get("(none)", 0), 0.05 * process["traced_thread_ns"], totals)
        self.assertEqual(process["unmatched"]["functions"], [])


if __name__ == "__main__":
    main(extra_arguments=("--python", "--share"))
