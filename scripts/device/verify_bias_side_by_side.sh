#!/usr/bin/env bash
# The correction's bias on the GPU machine, measured with the host's noise
# cancelled: each pair runs its unprofiled and its profiled run at the same
# time, on disjoint halves of the vCPUs (taskset), so a slow stretch of the
# shared host (scripts/device/RESULTS.md: one loop at 35 or 55-75 ns a
# call, from one moment to the next, unseen by the guest) slows both alike.
# The halves swap every pair. Both runs share the GPU, as they would share
# it with any other process: the baseline is "unprofiled beside a twin",
# not "unprofiled alone", which is what `rlscope validate` measures
# (run it too, for the standalone figure). Torch's and OpenMP's CPU threads
# are capped to the half's size in both runs alike (OMP_NUM_THREADS), so
# the twins do not compete for cores.
# First probe_host_speed.py: whether the host slows vCPUs together at all.
# With .device carried and CleanRL's sources in .device/bench_sources;
# CALIBRATION_IN=FILE reuses a calibration; PAIRS (default 6), ONLY="dqn
# ppo dqn_jax td3 sac ppo_continuous td3_jax bundled_dqn bundled_ppo",
# STEPS_DQN, STEPS_PPO, STEPS_OFF_POLICY; CONFIGS="all
# nocupti nopython noop" (default all) also profiles without CUPTI,
# without the Python level (RLSCOPE_PYTHON_HOOK=off) and with a Python
# hook whose callbacks do nothing (RLSCOPE_PYTHON_HOOK=noop, 3.12+: what
# the interpreter's side of a callback costs), the configurations in turn
# within each pair's round. Where the Python hook was timed, each pair's
# line gives its callbacks and the corrected wall's excess per callback.
# DEADLINE_S: no pair starts after that many seconds from the script's
# start, so the summary still prints within the device's per-command limit. Table last; logs, and each profiled run's
# correction (report.json's "correction", by cost) in $OUT/pairs.json.
# Each pair's line also gives the CUDA API's measured time and what
# CUPTI's calls were priced at: a nocupti run's measured time set beside
# an all run's is what CUPTI adds to the calls in that program.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_bias_side_by_side.log
pairs="${PAIRS:-6}"
fresh_work /tmp/rlscope-side-by-side
cpus=$(nproc)
half=$((cpus / 2))
low="0-$((half - 1))"
high="$half-$((cpus - 1))"
export OMP_NUM_THREADS=$half MKL_NUM_THREADS=$half

echo "== host speed, side by side ($low vs $high)"
probe_cpus=(0 "$half")
((half >= 4)) && probe_cpus=(1 3 $((half + 1)) $((half + 3)))
timeout 120 python3 "$root/scripts/device/probe_host_speed.py" "${HOST_SECONDS:-10}" "${probe_cpus[@]}"

calibration_into_out

use_cleanrl
cd "$work" || exit 1

pair() {  # name, index, rlscope run options, --, the command: one unprofiled and one profiled run at once
  local name="$1" i="$2"; shift 2
  local options=()
  while [[ "$1" != -- ]]; do options+=("$1"); shift; done
  shift
  local u_cpus="$low" p_cpus="$high"
  ((i % 2 == 0)) && { u_cpus="$high"; p_cpus="$low"; }
  local dir="$work/$name/$i"
  mkdir -p "$dir/u" "$dir/p"
  (
    cd "$dir/u" || exit 1
    begin=$(date +%s%N)
    taskset -c "$u_cpus" "$@" >stdout 2>stderr
    echo "$(($(date +%s%N) - begin))" >"$dir/u_wall_ns"
  ) &
  local unprofiled=$!
  (
    cd "$dir/p" || exit 1
    env "${profiled_env[@]}" taskset -c "$p_cpus" "$rlscope" run --quiet --calibration "$out/calibration.json" --out "$dir/run" "${options[@]}" -- "$@" \
      >stdout 2>stderr
  ) &
  # Not a bare `wait`: it would wait for common.sh's tee too.
  wait "$unprofiled" $!
}
run_pairs() {  # name, then the command; once per configuration
  local name="$1"; shift
  [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]] && return 0
  local config i
  echo "== $name (${CONFIGS:-all}): $pairs pairs of each, the configurations in turn"
  for ((i = 1; i <= pairs; i++)); do
    for config in ${CONFIGS:-all}; do
      if [[ -n "${DEADLINE_S:-}" ]] && ((SECONDS >= DEADLINE_S)); then
        echo "   (deadline of ${DEADLINE_S} s reached: ${name} pair $i and later skipped)"
        return 0
      fi
      local options=()
      profiled_env=()
      [[ "$config" == nocupti ]] && options=(--no-cupti)
      [[ "$config" == nopython ]] && profiled_env=(RLSCOPE_PYTHON_HOOK=off)
      [[ "$config" == noop ]] && profiled_env=(RLSCOPE_PYTHON_HOOK=noop)
      pair "${name}_$config" "$i" "${options[@]}" -- "$@"
    done
  done
}
# The bundled workloads too (ONLY="bundled_dqn bundled_ppo"; on the
# build machine BUNDLED_DEVICE=cpu, with PATH's python3 the one with torch).
run_pairs bundled_dqn python3 "$root/scripts/workloads/dqn.py" --device "${BUNDLED_DEVICE:-cuda}" \
  --steps "${STEPS_BUNDLED_DQN:-1000}" --quiet
run_pairs bundled_ppo python3 "$root/scripts/workloads/ppo.py" --device "${BUNDLED_DEVICE:-cuda}" \
  --steps "${STEPS_BUNDLED_PPO:-2000}" --quiet
run_pairs dqn "${cleanrl[@]}" "$scripts/dqn.py" --env-id CartPole-v1 --total-timesteps "${STEPS_DQN:-3000}" \
  --learning-starts 1000 --cuda
run_pairs ppo "${cleanrl[@]}" "$scripts/ppo.py" --env-id CartPole-v1 --total-timesteps "${STEPS_PPO:-4096}" --cuda
python3 -c 'import jax, flax, optax' 2>/dev/null &&
  run_pairs dqn_jax "${cleanrl[@]}" "$scripts/dqn_jax.py" --env-id CartPole-v1 \
    --total-timesteps "${STEPS_DQN:-3000}" --learning-starts 1000
# Continuous control on Pendulum-v1 (classic control: the GPU machine has
# no MuJoCo): off-policy with a gradient step every step after
# learning_starts, and on-policy with long minibatch epochs.
run_pairs td3 "${cleanrl[@]}" "$scripts/td3_continuous_action.py" --env-id Pendulum-v1 \
  --total-timesteps "${STEPS_OFF_POLICY:-3000}" --learning-starts 1000 --cuda
run_pairs sac "${cleanrl[@]}" "$scripts/sac_continuous_action.py" --env-id Pendulum-v1 \
  --total-timesteps "${STEPS_OFF_POLICY:-3000}" --learning-starts 1000 --cuda
run_pairs ppo_continuous "${cleanrl[@]}" "$scripts/ppo_continuous_action.py" --env-id Pendulum-v1 \
  --total-timesteps "${STEPS_PPO:-4096}" --cuda
python3 -c 'import jax, flax, optax' 2>/dev/null &&
  run_pairs td3_jax "${cleanrl[@]}" "$scripts/td3_continuous_action_jax.py" --env-id Pendulum-v1 \
    --total-timesteps "${STEPS_OFF_POLICY:-3000}" --learning-starts 1000

echo "== summary: per pair, unprofiled and profiled at the same time"
python3 - "$work" "$out" <<'PY'
import glob, json, os, statistics, sys
work, out = sys.argv[1:]
kept = {}
for name in sorted(os.listdir(work)):
    raws, biases, uncorrected, excess = [], [], [], []
    for d in sorted(glob.glob(os.path.join(work, name, "*"))):
        try:
            u = int(open(os.path.join(d, "u_wall_ns")).read())
            report = json.load(open(os.path.join(d, "run", "report.json")))
        except (OSError, ValueError) as e:
            print(f"{name} {os.path.basename(d)}: no result ({e})")
            continue
        p, c = report["wall_ns"], report.get("corrected_wall_ns")
        kept[f"{name}/{os.path.basename(d)}"] = {"unprofiled_wall_ns": u, "profiled_wall_ns": p,
                                                 "corrected_wall_ns": c, "correction": report.get("correction")}
        raws.append(p / u)
        uncorrected.append(p / u - 1)
        if c:
            biases.append(c / u - 1)
        hook = (report.get("correction") or {}).get("python_hook") or {}
        callbacks = ""
        if c and hook.get("callbacks"):
            excess.append((c - u) / hook["callbacks"])
            callbacks = (f", {hook['callbacks'] / 1e6:.2f} M callbacks, hook {hook['per_callback_ns']:.0f} ns "
                         f"a callback, corrected - unprofiled {excess[-1]:+.0f} ns a callback")
        # The CUDA API's measured time: set beside a nocupti run's, what
        # CUPTI adds to the calls in this program, against its price.
        api = sum(row["ns"] for row in report.get("uncorrected_rows") or report["rows"]
                  if row.get("category") == "CUDA API")
        priced = sum(site["ns"] for key, site in ((report.get("correction") or {}).get("sites") or {}).items()
                     if key.startswith("cupti:"))
        kept[f"{name}/{os.path.basename(d)}"].update(cuda_api_ns=api, cupti_priced_ns=priced)
        print(f"{name} pair {os.path.basename(d)}: unprofiled {u / 1e9:.2f} s, profiled {p / 1e9:.2f} s, "
              f"corrected {c / 1e9 if c else float('nan'):.2f} s, CUDA API measured {api / 1e9:.2f} s "
              f"(CUPTI priced {priced / 1e9:.2f} s){callbacks}")
    if not raws:
        continue
    sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
    line = f"{name:<8} pairs {len(raws)}  raw {statistics.fmean(raws):.3f}x sd {sd(raws):.3f}"
    if biases:
        se = sd(biases) / len(biases) ** 0.5
        line += (f"  bias {100 * statistics.fmean(biases):+.2f} % sd {100 * sd(biases):.2f} "
                 f"(+- {100 * se:.2f} standard error)  uncorrected {100 * statistics.fmean(uncorrected):+.2f} %")
    if excess:
        line += f"  excess {statistics.fmean(excess):+.0f} ns a callback"
    print(line)
json.dump(kept, open(os.path.join(out, "pairs.json"), "w"), indent=1)
PY
