#!/usr/bin/env bash
# Raw repetitions of the Python calibration loops on the GPU machine, for
# when `rlscope calibrate` finds a Python cost its repetitions do not pin
# down (there it prints only the median and spread). Each case runs
# unprofiled and profiled in alternation, REPS times; every line is one
# run (the loop's own JSON: elapsed_ns is its uncontended time), and a
# table of the per-event differences, pair by pair, is printed last.
# With .device carried (scripts/device/bundle.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_python_costs.log
python="$(command -v python3)"
script="$bundle/share/rlscope/calibration/calibrate_python.py"
rules="$bundle/share/rlscope/calibration/calibrate.rules"
reps="${REPS:-6}"
work=/tmp/rlscope-probe
rm -rf "$work" && mkdir -p "$work"
"$python" -c 'import sys; print(sys.version.split()[0])'

one() {  # side case iterations [rlscope run options]
  local side="$1" case="$2" n="$3"; shift 3
  if [[ "$side" == plain ]]; then
    "$python" "$script" --case "$case" --iterations "$n"
  else
    # Without native stack samples, as calibrate's loops run.
    RLSCOPE_STACK_INTERVAL_US=0 "$rlscope" run --quiet --out "$work/run" "$@" -- \
      "$python" "$script" --case "$case" --iterations "$n" |
      grep '^{'
    rm -rf "$work/run"
  fi
}

for spec in "python_call 400000" "python_call_site 2000000" "python_operation 500000"; do
  read -r case n <<<"$spec"
  options=()
  [[ "$case" == python_operation ]] && options=(--rules "$rules")
  for ((i = 0; i < reps; i++)); do
    echo "plain $(one plain "$case" "$n")"
    echo "profiled $(one profiled "$case" "$n" "${options[@]}")"
  done
done | tee "$work/lines.txt"

# Interpreter start-up and exit: wall time of `python3 -c pass`.
for ((i = 0; i < reps; i++)); do
  a=$(date +%s%N); "$python" -c pass; b=$(date +%s%N)
  "$rlscope" run --quiet --out "$work/run" -- "$python" -c pass; c=$(date +%s%N)
  rm -rf "$work/run"
  echo "process plain_ns $((b - a)) profiled_ns $((c - b))"
done | tee "$work/process.txt"

echo "== per-event differences, pair by pair (ns)"
python3 - "$work/lines.txt" <<'PY'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    side, _, text = line.partition(" ")
    try:
        v = json.loads(text)
    except ValueError:
        continue
    runs.setdefault(v["case"], []).append((side, v))
for case, items in runs.items():
    plain = [v for s, v in items if s == "plain"]
    prof = [v for s, v in items if s == "profiled"]
    events = plain[0]["iterations"] * plain[0]["events_per_iteration"]
    diffs = [(p["elapsed_ns"] - b["elapsed_ns"]) / events for b, p in zip(plain, prof)]
    per_it = [b["elapsed_ns"] / plain[0]["iterations"] for b in plain]
    print(f"{case}: plain ns/iteration {' '.join('%.1f' % x for x in per_it)}")
    print(f"{case}: profiled - plain ns/event {' '.join('%.1f' % x for x in diffs)}")
    print(f"{case}: kept plain {' '.join(str(b['kept_fraction']) for b in plain)} profiled "
          f"{' '.join(str(p['kept_fraction']) for p in prof)}")
PY
