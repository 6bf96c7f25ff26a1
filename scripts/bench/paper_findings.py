#!/usr/bin/python3
"""RL-Scope's findings (Gleeson et al., MLSys 2021), measured again with
rlscope on unmodified programs. Three questions:

  1. simulation  Are on-policy algorithms more simulation-bound than
                 off-policy ones? (RL-Scope: at least 3.5x.) PPO against DQN
                 or TD3 on two environment families: Gymnasium's classic
                 control (CartPole-v1, Pendulum-v1; pure-Python physics)
                 and MuJoCo (the bundled cart-pole, libmujoco through
                 ctypes). Per run: the share of training time in
                 `simulation` (its thread time over the thread time of every
                 operation but `startup` and `teardown`; corrected), and
                 each operation's share.
  2. frameworks  One algorithm in torch and in JAX, compared by
                 `rlscope diff --per-step`: every operation must be present
                 on both sides; times are per environment step.
  3. gpu         nvidia-smi's mean utilization against the GPU-busy
                 fraction rlscope measures (kernels, copies, sets on the
                 device), both over the profiled run.

Usage:
  paper_findings.py run --rlscope BUILD/bin/rlscope [--sources DIR]
                        [--python PY] [--device cpu|cuda] [--repeat N]
                        [--only NAME ...] [--keep DIR] [--json FILE]

Each program is profiled --repeat times (default 2), programs interleaved;
shares are given as the mean and [min..max]. Reports are corrected when a
calibration exists for the machine (`rlscope calibrate` first; uncorrected
shares include rlscope's own overhead and the output says so).

Third-party programs (CleanRL's ppo.py, dqn.py, ppo_continuous_action.py,
td3_continuous_action.py, dqn_jax.py on Gymnasium) are never part of this
repository: --sources is the folder `inference_accuracy.py prepare-sources`
makes. The bundled MuJoCo workloads (scripts/workloads/) need Debian's
libmujoco2.2.2 (or $RLSCOPE_MUJOCO_LIB). A program whose framework is
missing (JAX on Debian) is listed as not run, with the reason.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = os.path.join(ROOT, "scripts", "workloads")
STANDINS = os.path.join(HERE, "inference_corpus", "standins")
sys.path.insert(0, HERE)
from inference_accuracy import THIRD_PARTY  # noqa: E402  (the pinned commits)

PYTHON = "/usr/bin/python3"
RL_SCOPE_ON_POLICY_FACTOR = 3.5  # On-policy at least this much more simulation-bound (the paper).


def CleanRL(script, *args):
    return {"source": "cleanrl", "script": script, "args": list(args)}


def Bundled(script, *args):
    return {"source": "bundled", "script": script, "args": list(args)}


# Sizes: long enough that training (not warm-up) dominates, short enough for
# a device session. Off-policy ones train from early on (learning starts
# lowered); every other hyper-parameter is the script's default.
PROGRAMS = {
    "cartpole_ppo": dict(family="classic control", env="CartPole-v1", policy="on", framework="torch",
                         **CleanRL("ppo.py", "--env-id", "CartPole-v1", "--total-timesteps", "32768")),
    "cartpole_dqn": dict(family="classic control", env="CartPole-v1", policy="off", framework="torch",
                         **CleanRL("dqn.py", "--env-id", "CartPole-v1", "--total-timesteps", "12000",
                                   "--learning-starts", "2000")),
    "cartpole_dqn_jax": dict(family="classic control", env="CartPole-v1", policy="off", framework="jax",
                             **CleanRL("dqn_jax.py", "--env-id", "CartPole-v1", "--total-timesteps", "12000",
                                       "--learning-starts", "2000")),
    "pendulum_ppo": dict(family="classic control", env="Pendulum-v1", policy="on", framework="torch",
                         **CleanRL("ppo_continuous_action.py", "--env-id", "Pendulum-v1", "--total-timesteps",
                                   "8192")),
    "pendulum_td3": dict(family="classic control", env="Pendulum-v1", policy="off", framework="torch",
                         **CleanRL("td3_continuous_action.py", "--env-id", "Pendulum-v1", "--total-timesteps",
                                   "3000", "--learning-starts", "1000")),
    "mujoco_ppo": dict(family="MuJoCo", env="bundled cart-pole", policy="on", framework="torch",
                       **Bundled("ppo.py", "--steps", "16384")),
    "mujoco_dqn": dict(family="MuJoCo", env="bundled cart-pole", policy="off", framework="torch",
                       **Bundled("dqn.py", "--steps", "6000")),
    "mujoco_dqn_jax": dict(family="MuJoCo", env="bundled cart-pole", policy="off", framework="jax",
                           **Bundled("dqn_jax.py", "--steps", "6000")),
}
# On-policy against off-policy, same environment.
SIMULATION_PAIRS = [("cartpole_ppo", "cartpole_dqn"), ("pendulum_ppo", "pendulum_td3"), ("mujoco_ppo", "mujoco_dqn")]
# torch against JAX, same algorithm and environment.
FRAMEWORK_PAIRS = [("cartpole_dqn", "cartpole_dqn_jax"), ("mujoco_dqn", "mujoco_dqn_jax")]
# What every RL training run does, in torch as in JAX: the diff must find
# each on both sides (compile is JAX's alone unless torch.compile is used).
TRAINING_OPERATIONS = {"simulation", "inference", "backprop", "replay"}
SETUP_OPERATIONS = ("startup", "teardown")  # Not training: imports and set-up, exit.


# Options whose value is a length of training, scaled by --scale.
SCALED_OPTIONS = ("--total-timesteps", "--steps")


def Scaled(args, scale, minimum):
    out = list(args)
    for i, arg in enumerate(out[:-1]):
        if arg in SCALED_OPTIONS:
            out[i + 1] = str(max(minimum, int(int(out[i + 1]) * scale)))
    return out


def Command(program, python, sources, device, scale=1.0):
    """(argv, env additions) of one program, or raises RuntimeError (why it cannot run)."""
    # Never below the off-policy learning starts: some training must happen.
    starts = program["args"][program["args"].index("--learning-starts") + 1] if "--learning-starts" in program["args"] else "0"
    program = dict(program, args=Scaled(program["args"], scale, 2 * int(starts)))
    if program["source"] == "cleanrl":
        if not sources:
            raise RuntimeError("third-party: pass --sources DIR")
        roots = [os.path.join(sources, THIRD_PARTY[s][0]) for s in ("cleanrl", "gymnasium")]
        for root in roots:
            if not os.path.isdir(root):
                raise RuntimeError(f"{root} is missing (inference_accuracy.py prepare-sources)")
        script = os.path.join(roots[0], "cleanrl", program["script"])
        argv = [python, os.path.join(STANDINS, "run_with_standins.py"), script, *program["args"]]
        # CleanRL's torch scripts take --cuda/--no-cuda; its JAX ones have no
        # such flag (JAX picks the GPU when it has one).
        if program["framework"] == "torch":
            argv.append("--cuda" if device == "cuda" else "--no-cuda")
        return argv, {"PYTHONPATH": os.pathsep.join(roots + [STANDINS])}
    argv = [python, os.path.join(WORKLOADS, program["script"]), *program["args"], "--device", device, "--quiet"]
    return argv, {}


def Missing(program, python):
    """Why the interpreter cannot run the program's framework, or ""."""
    modules = {"torch": ["torch"], "jax": ["jax", "flax", "optax"] if program["source"] == "cleanrl" else ["jax"]}
    for module in modules[program["framework"]]:
        if subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode != 0:
            return f"{python} has no {module}"
    return ""


def Shares(report):
    """Per operation, its CPU-side thread time (corrected when the report
    is); and the training time: the thread time of every operation but
    start-up and teardown. Thread time, not wall time: XLA compiles and
    torch back-propagates on threads of their own, in parallel with the
    main one, so a share of the wall time could pass 100 %; shares of the
    thread time add up to 100 % (blocked time is Wait, in no row)."""
    cpu = {}
    for row in report["rows"]:
        if row["resource"] != "GPU":
            cpu[row["operation"]] = cpu.get(row["operation"], 0) + row["ns"]
    training = sum(ns for op, ns in cpu.items() if op not in SETUP_OPERATIONS)
    return cpu, max(training, 1)


def GpuFigures(report):
    """(busy fraction of the profiled wall time, nvidia-smi's mean fraction
    of its busiest GPU) or None where the run had neither."""
    smi = report.get("nvidia_smi", {}).get("gpus") or []
    busy = report.get("gpu_busy_ns", 0)
    if not smi and not busy:
        return None
    mean = max((g["mean_utilization_percent"] for g in smi), default=None)
    return busy / report["wall_ns"], (mean / 100 if mean is not None else None)


def ProfileOnce(name, program, args, workdir):
    argv, extra_env = Command(program, args.python, args.sources, args.device, args.scale)
    env = dict(os.environ)
    for key, value in extra_env.items():
        env[key] = os.pathsep.join([value] + ([env[key]] if env.get(key) else []))
    env.setdefault("OMP_NUM_THREADS", "1")
    out = os.path.join(workdir, "run")
    started = time.monotonic()
    result = subprocess.run([args.rlscope, "run", "--quiet", "--out", out, "--", *argv], cwd=workdir, env=env,
                            capture_output=True, text=True, errors="replace", timeout=args.timeout)
    if result.returncode != 0:
        raise RuntimeError(f"`rlscope run` exited {result.returncode}: {result.stderr[-2000:]}")
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    return {"dir": out, "seconds": time.monotonic() - started, "report": report}


def Stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"mean": sum(values) / len(values), "min": min(values), "max": max(values), "n": len(values)}


def Span(stats, percent=True):
    if stats is None:
        return "-"
    f = (lambda v: f"{100 * v:.1f}%") if percent else (lambda v: f"{v:.2f}")
    return f"{f(stats['mean'])} [{f(stats['min'])}..{f(stats['max'])}]"


def DiffPerStep(rlscope, a, b):
    result = subprocess.run([rlscope, "diff", "--per-step", "--format", "json", a, b], capture_output=True, text=True,
                            errors="replace", timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"`rlscope diff` exited {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def RunCommand(args):
    args.rlscope = os.path.abspath(args.rlscope)
    names = args.only or list(PROGRAMS)
    runs = {name: [] for name in names}
    why_not = {}
    for name in names:
        why = Missing(PROGRAMS[name], args.python)
        if not why:
            try:
                Command(PROGRAMS[name], args.python, args.sources, args.device)
            except RuntimeError as error:
                why = str(error)
        if why:
            why_not[name] = why
            print(f"{name}: not run: {why}", file=sys.stderr, flush=True)
    keep = args.keep or tempfile.mkdtemp(prefix="rlscope-findings-")
    os.makedirs(keep, exist_ok=True)
    for repetition in range(args.repeat):
        for name in names:
            if name in why_not:
                continue
            workdir = os.path.join(keep, f"{name}.{repetition}")
            shutil.rmtree(workdir, True)
            os.makedirs(workdir)
            try:
                runs[name].append(ProfileOnce(name, PROGRAMS[name], args, workdir))
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as error:
                why_not[name] = f"repetition {repetition}: {error}"
                print(f"{name} #{repetition}: not run: {error}", file=sys.stderr, flush=True)
                continue
            report = runs[name][-1]["report"]
            cpu, training = Shares(report)
            print(f"{name} #{repetition}: {runs[name][-1]['seconds']:.1f} s, simulation "
                  f"{cpu.get('simulation', 0) / training:.1%} of training, corrected={report.get('corrected')}",
                  file=sys.stderr, flush=True)

    results = {"date": time.strftime("%Y-%m-%d"), "device": args.device, "python": args.python,
               "scale": args.scale, "programs": {},
               "simulation_pairs": [], "framework_pairs": [], "not_run": why_not}
    for name in names:
        if not runs[name]:
            continue
        shares = {}
        for run in runs[name]:
            cpu, training = Shares(run["report"])
            for op, ns in cpu.items():
                shares.setdefault(op, []).append(ns / training)
        gpu = [GpuFigures(run["report"]) for run in runs[name]]
        results["programs"][name] = {
            **{k: PROGRAMS[name][k] for k in ("family", "env", "policy", "framework")},
            "corrected": all(run["report"].get("corrected") for run in runs[name]),
            "seconds": Stats([run["seconds"] for run in runs[name]]),
            "shares_of_training": {op: Stats(v + [0] * (len(runs[name]) - len(v))) for op, v in shares.items()},
            "gpu_busy_fraction": Stats([g[0] for g in gpu if g]),
            "nvidia_smi_mean_fraction": Stats([g[1] for g in gpu if g]),
            "dirs": [run["dir"] for run in runs[name]],
            # Per run, each operation's CPU-side thread time (ns): enough to
            # recompute any share without the run directories.
            "runs": [{"wall_ns": run["report"]["wall_ns"], "corrected_wall_ns": run["report"].get("corrected_wall_ns"),
                      "cpu_ns": Shares(run["report"])[0]} for run in runs[name]],
        }
    programs = results["programs"]
    for on, off in SIMULATION_PAIRS:
        if on not in programs or off not in programs:
            continue
        s_on = programs[on]["shares_of_training"].get("simulation")
        s_off = programs[off]["shares_of_training"].get("simulation")
        ratios = [a / b for a, b in zip(SimulationShares(runs[on]), SimulationShares(runs[off])) if b > 0]
        results["simulation_pairs"].append({"on_policy": on, "off_policy": off, "family": PROGRAMS[on]["family"],
                                            "env": PROGRAMS[on]["env"], "on_share": s_on, "off_share": s_off,
                                            "ratio": Stats(ratios)})
    for torch_name, jax_name in FRAMEWORK_PAIRS:
        if torch_name not in programs or jax_name not in programs:
            continue
        try:
            diff = DiffPerStep(args.rlscope, runs[torch_name][-1]["dir"], runs[jax_name][-1]["dir"])
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            why_not[f"{torch_name} vs {jax_name}"] = str(error)
            continue
        results["framework_pairs"].append(FrameworkComparison(torch_name, jax_name, diff))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(FormatResults(results))
    return 0


def SimulationShares(runs):
    out = []
    for run in runs:
        cpu, training = Shares(run["report"])
        out.append(cpu.get("simulation", 0) / training)
    return out


def FrameworkComparison(torch_name, jax_name, diff):
    """Per operation, µs per step on each side, and which side lacks it."""
    operations = []
    for op in diff["operations"]:
        values = op["cpu_ns"]["values"]
        operations.append({"operation": op["operation"], "torch_us_per_step": None if values[0] is None else values[0] / 1e3,
                           "jax_us_per_step": None if values[1] is None else values[1] / 1e3})
    totals = diff["totals"]
    return {"torch": torch_name, "jax": jax_name, "steps": totals["steps"]["values"],
            "wall_us_per_step": [None if v is None else v / 1e3 for v in totals["total_wall_ns"]["values"]],
            "operations": operations,
            "one_sided": [o["operation"] for o in operations
                          if (o["torch_us_per_step"] is None) != (o["jax_us_per_step"] is None)],
            "training_operations_on_both_sides": all(
                o["torch_us_per_step"] is not None and o["jax_us_per_step"] is not None
                for o in operations if o["operation"] in TRAINING_OPERATIONS) and
                TRAINING_OPERATIONS <= {o["operation"] for o in operations},
            "corrected": [run["corrected"] for run in diff["runs"]], "warnings": diff["warnings"]}


def FormatResults(results):
    lines = [f"rlscope paper findings, {results['date']}, device {results['device']}, {results['python']}, "
             f"lengths x{results['scale']:g}"]
    lines.append("\n1. simulation share of training time (on-policy vs off-policy; RL-Scope: on-policy >= "
                 f"{RL_SCOPE_ON_POLICY_FACTOR}x)")
    lines.append("| family | env | on-policy | simulation | off-policy | simulation | ratio on/off |")
    lines.append("|---|---|---|---|---|---|---|")
    for pair in results["simulation_pairs"]:
        lines.append(f"| {pair['family']} | {pair['env']} | {pair['on_policy']} | {Span(pair['on_share'])} | "
                     f"{pair['off_policy']} | {Span(pair['off_share'])} | {Span(pair['ratio'], percent=False)}x |")
    lines.append("\nshares of training thread time per program (mean of repetitions; corrected unless marked):")
    lines.append("| program | s per run | simulation | inference | backprop | replay | compile | (none) | other |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    named = ("simulation", "inference", "backprop", "replay", "compile", "(none)")
    for name, program in results["programs"].items():
        shares = program["shares_of_training"]
        other = sum(s["mean"] for op, s in shares.items() if op not in named and op not in SETUP_OPERATIONS)
        cells = [f"{100 * shares[op]['mean']:.1f}%" if op in shares else "-" for op in named]
        mark = "" if program["corrected"] else " (NOT corrected)"
        lines.append(f"| {name}{mark} | {program['seconds']['mean']:.1f} | " + " | ".join(cells) +
                     f" | {100 * other:.1f}% |")
    if results["framework_pairs"]:
        lines.append("\n2. torch vs JAX, `rlscope diff --per-step` (CPU-side µs per simulation step)")
        for pair in results["framework_pairs"]:
            lines.append(f"{pair['torch']} vs {pair['jax']}: steps {pair['steps']}, wall per step "
                         + " vs ".join("-" if v is None else f"{v:.0f} us" for v in pair["wall_us_per_step"])
                         + ("; simulation, inference, backprop and replay on both sides"
                            if pair["training_operations_on_both_sides"] else "; A TRAINING OPERATION IS ONE-SIDED")
                         + (f"; on one side only: {', '.join(pair['one_sided'])}" if pair["one_sided"] else ""))
            lines.append("| operation | torch us/step | jax us/step |")
            lines.append("|---|---|---|")
            for op in pair["operations"]:
                cells = ["-" if op[k] is None else f"{op[k]:.1f}" for k in ("torch_us_per_step", "jax_us_per_step")]
                lines.append(f"| {op['operation']} | {cells[0]} | {cells[1]} |")
    gpu_rows = [(n, p) for n, p in results["programs"].items() if p["gpu_busy_fraction"]]
    if gpu_rows:
        lines.append("\n3. GPU: nvidia-smi utilization against the GPU-busy fraction (of the profiled wall time)")
        lines.append("| program | rlscope GPU busy | nvidia-smi mean | overstatement |")
        lines.append("|---|---|---|---|")
        for name, p in gpu_rows:
            busy, smi = p["gpu_busy_fraction"], p["nvidia_smi_mean_fraction"]
            factor = f"{smi['mean'] / busy['mean']:.1f}x" if smi and busy["mean"] > 0 else "-"
            lines.append(f"| {name} | {Span(busy)} | {Span(smi)} | {factor} |")
    for name, why in results["not_run"].items():
        lines.append(f"not run: {name}: {why.strip().splitlines()[-1] if why.strip() else why}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="profile the programs and print the findings")
    run.add_argument("--rlscope", required=True, help="the rlscope executable (BUILD/bin/rlscope)")
    run.add_argument("--python", default=PYTHON, help=f"the interpreter, with torch (default {PYTHON})")
    run.add_argument("--sources", default="", help="folder made by inference_accuracy.py prepare-sources")
    run.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the networks run")
    run.add_argument("--repeat", type=int, default=2, help="profiled runs per program (interleaved)")
    run.add_argument("--only", nargs="*", default=(), choices=sorted(PROGRAMS), help="program names")
    run.add_argument("--keep", default="", help="keep the run directories under this folder")
    run.add_argument("--json", default="", help="also write the results as JSON to this file")
    run.add_argument("--timeout", type=int, default=600, help="seconds per profiled run")
    run.add_argument("--scale", type=float, default=1.0,
                     help="multiply every program's length (--total-timesteps, --steps) by this; off-policy "
                          "ones keep at least twice their learning starts")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not 0 < args.scale <= 100:
        parser.error("--scale must be in (0, 100]")
    return RunCommand(args)


if __name__ == "__main__":
    sys.exit(main())
