#!/usr/bin/env bash
# What each capture level adds to an unmodified CleanRL script's wall time
# on the GPU machine: the script unprofiled, profiled with every level,
# without CUPTI (--no-cupti), without the Python level
# (RLSCOPE_PYTHON_HOOK=off), and with neither, REPS rounds interleaved
# (the host is noisy). With .device carried (scripts/device/bundle.sh) and
# the pinned sources in .device/bench_sources (inference_accuracy.py
# prepare-sources). A table of wall times, min / median / max, is printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_overhead_levels.log
python="$(command -v python3)"
reps="${REPS:-2}"
sources="$bundle/bench_sources"
standins="$root/scripts/bench/inference_corpus/standins"
work=/tmp/rlscope-levels
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export PYTHONPATH="$sources/cleanrl:$sources/gymnasium-0.29.1:$standins${PYTHONPATH:+:$PYTHONPATH}"
script="${SCRIPT:-dqn.py}"
command=("$python" "$standins/run_with_standins.py" "$sources/cleanrl/cleanrl/$script" --env-id CartPole-v1
  --total-timesteps "${STEPS:-4000}" --learning-starts 1000 --cuda)
[[ "$script" == *jax* ]] && command=("${command[@]:0:$((${#command[@]} - 1))}")  # JAX has no --cuda.

timed() {  # name, then the command: appends "name ms" to times.txt
  # A profiled run's wall is the command's own (meta.json wall_ns), not
  # rlscope's analysis after it.
  local name="$1"; shift
  local begin end ms
  begin=$(date +%s%N)
  "$@" >"$work/$name.out" 2>&1 || echo "$name failed: $(tail -3 "$work/$name.out")"
  end=$(date +%s%N)
  ms=$(((end - begin) / 1000000))
  [[ -f "$work/run/meta.json" ]] &&
    ms=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["wall_ns"] // 1000000)' "$work/run/meta.json")
  echo "$name $ms" | tee -a "$work/times.txt"
  rm -rf "$work/run"
}
profiled() { "$rlscope" run --quiet --out "$work/run" "$@" -- "${command[@]}"; }
for ((i = 0; i < reps; i++)); do
  timed unprofiled "${command[@]}"
  timed all_levels profiled
  timed no_cupti profiled --no-cupti
  RLSCOPE_PYTHON_HOOK=off timed no_python profiled
  RLSCOPE_PYTHON_HOOK=off timed neither profiled --no-cupti
done

echo "== $script, wall s: min / median / max of $reps"
python3 - "$work/times.txt" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, ms = line.split()
    times.setdefault(name, []).append(int(ms) / 1000)
base = statistics.median(times["unprofiled"])
for name, values in times.items():
    m = statistics.median(values)
    print(f"{name:<12} {min(values):7.2f} {m:7.2f} {max(values):7.2f}   x{m / base:.3f} of unprofiled's median")
PY
