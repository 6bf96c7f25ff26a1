#!/usr/bin/env bash
# The user's whole wait for a report on the GPU machine: `rlscope run`
# from launch to the printed report (the program profiled, then the report
# stage), against the program alone, and `rlscope report` of the same run
# again; each with rlscope's memory on huge pages (the default) and
# without (RLSCOPE_HUGE_PAGES=0; collector/huge_page_malloc.h). Rounds of
# unprofiled, huge pages, normal pages, in turn, so the host's slow
# stretches fall on all three alike, after one unprofiled warm-up run.
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
  local i hp
  for ((i = 1; i <= rounds; i++)); do
    echo "$name unprofiled $(seconds_of "$@")" >>"$work/times"
    for hp in 1 0; do
      local dir="$work/$name-$i-$hp"
      echo "$name run_hp$hp $(seconds_of env RLSCOPE_HUGE_PAGES=$hp "$rlscope" run --calibration "$out/calibration.json" \
        --out "$dir" -- "$@")" >>"$work/times"
      echo "$name report_hp$hp $(seconds_of env RLSCOPE_HUGE_PAGES=$hp "$rlscope" report "$dir")" >>"$work/times"
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
print(f"{'workload':<12} {'unprofiled':>11} {'run, huge':>11} {'run, normal':>12} {'wait huge':>9} "
      f"{'wait normal':>11} {'report huge':>11} {'report normal':>13}")
for name, t in times.items():
    u = statistics.median(t["unprofiled"])
    ratio = lambda key: f"{statistics.median(t[key]) / u:.2f}x" if t[key] else "-"
    print(f"{name:<12} {span(t['unprofiled']):>11} {span(t['run_hp1']):>11} {span(t['run_hp0']):>12} "
          f"{ratio('run_hp1'):>9} {ratio('run_hp0'):>11} {span(t['report_hp1']):>11} {span(t['report_hp0']):>13}")
PY
