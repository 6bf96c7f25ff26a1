#!/usr/bin/env bash
# The user's whole wait for a report on the GPU machine: `rlscope run`
# from launch to the printed report (the program profiled, then the report
# stage), against the program alone, and `rlscope report` of the same run
# again; each with the trace decoded during the run (RLSCOPE_LIVE_DECODING=1,
# the default on a machine of 4 CPUs or more; collector/live_decoding.h) and
# after it (=0). Rounds of unprofiled, during, after, in turn, so the
# host's slow stretches fall on all three alike, after one unprofiled
# warm-up run.
# With .device carried and CleanRL's sources in .device/bench_sources;
# CALIBRATION_IN=FILE reuses a calibration; ROUNDS (default 3); ONLY="dqn
# ppo dqn_jax bundled_dqn" (default dqn ppo dqn_jax). Table last; logs in $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" report_wait.log
rounds="${ROUNDS:-3}"
only="${ONLY:-dqn ppo dqn_jax}"
fresh_work /tmp/rlscope-report-wait
calibration_into_out

use_cleanrl
cd "$work" || exit 1

seconds_of() {  # the command's wall seconds, its output to $work/last.log
  local begin end
  begin=$(date +%s%N)
  "$@" >"$work/last.log" 2>&1 || echo "  failed ($?): $*; $(tail -3 "$work/last.log")" >&2
  end=$(date +%s%N)
  echo "$(((end - begin) / 1000000))"
}
measure() {  # name, then the command
  local name="$1"; shift
  [[ " $only " != *" $name "* ]] && return 0
  echo "== $name: a warm-up run (not counted: caches are cold on a fresh machine), then $rounds rounds"
  seconds_of "$@" >/dev/null
  local i live
  for ((i = 1; i <= rounds; i++)); do
    echo "$name unprofiled $(seconds_of "$@")" >>"$work/times"
    for live in 1 0; do
      local dir="$work/$name-$i-$live"
      echo "$name run_live$live $(seconds_of env RLSCOPE_LIVE_DECODING=$live "$rlscope" run \
        --calibration "$out/calibration.json" --out "$dir" -- "$@")" >>"$work/times"
      echo "$name report_live$live $(seconds_of "$rlscope" report "$dir")" >>"$work/times"
    done
    tail -5 "$work/times"
  done
}
measure bundled_dqn python3 "$root/scripts/workloads/dqn.py" --device "${BUNDLED_DEVICE:-cuda}" --steps 1000 --quiet
measure dqn "${cleanrl[@]}" "$scripts/dqn.py" --env-id CartPole-v1 --total-timesteps "${STEPS_DQN:-3000}" \
  --learning-starts 1000 --cuda
measure ppo "${cleanrl[@]}" "$scripts/ppo.py" --env-id CartPole-v1 --total-timesteps "${STEPS_PPO:-4096}" --cuda
measure dqn_jax "${cleanrl[@]}" "$scripts/dqn_jax.py" --env-id CartPole-v1 --total-timesteps "${STEPS_DQN:-3000}" \
  --learning-starts 1000
cp "$work/times" "$out/times.txt"

echo "== summary (seconds; min-max over rounds; wait = rlscope run / unprofiled, medians)"
python3 - "$work/times" <<'PY'
import collections, statistics, sys
times = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    name, what, ms = line.split()
    times[name][what].append(int(ms) / 1000)
span = lambda xs: f"{min(xs):.1f}-{max(xs):.1f}" if xs else "-"
print(f"{'workload':<12} {'unprofiled':>11} {'run, during':>11} {'run, after':>11} {'wait during':>11} "
      f"{'wait after':>10} {'report alone':>12}")
for name, t in times.items():
    u = statistics.median(t["unprofiled"])
    ratio = lambda key: f"{statistics.median(t[key]) / u:.2f}x" if t[key] else "-"
    print(f"{name:<12} {span(t['unprofiled']):>11} {span(t['run_live1']):>11} {span(t['run_live0']):>11} "
          f"{ratio('run_live1'):>11} {ratio('run_live0'):>10} {span(t['report_live1'] + t['report_live0']):>12}")
PY
