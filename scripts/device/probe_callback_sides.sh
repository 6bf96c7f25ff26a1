#!/usr/bin/env bash
# The two sides of a sys.monitoring callback (Python 3.12+) in the
# calibration's own loops: the hook's own time, which the in-band sample
# times (report.json's correction.python_hook), and the interpreter's side
# (passing the arguments, the instrumented instruction), which nothing in
# a run times. Each loop runs unprofiled, profiled with callbacks that do
# nothing (RLSCOPE_PYTHON_HOOK=noop: the interpreter's side, plus an empty
# callback) and profiled as usual, REPS rounds interleaved; the table
# gives medians: time added per iteration, callbacks per iteration, the
# timed hook time and the added time per callback. Set beside
# verify_bias_side_by_side.sh's CONFIGS="nopython noop all" on real
# programs, it says whether the interpreter's side grows in them as the
# hook's own time does. With .device carried (scripts/device/bundle.sh);
# CALIBRATION_IN=FILE reuses a calibration (needed for the timed hook).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_callback_sides.log
python="$(command -v python3)"
script="$bundle/share/rlscope/calibration/calibrate_python.py"
reps="${REPS:-5}"
fresh_work /tmp/rlscope-callback-sides
"$python" -c 'import sys; print(sys.version.split()[0])'
calibration_into_out

field() {  # a JSON value: field PYTHON_EXPRESSION_OF_v (v: the JSON read from stdin)
  python3 -c "import json, sys; v = json.load(sys.stdin); print($1)" 2>/dev/null || echo nan
}
one() {  # case iterations mode: prints "case mode iterations elapsed_ns callbacks hook_ns_per_callback"
  local case="$1" n="$2" mode="$3" loop
  if [[ "$mode" == plain ]]; then
    loop=$("$python" "$script" --case "$case" --iterations "$n" | grep '^{' | tail -1)
    echo "$case plain $n $(field 'v["elapsed_ns"]' <<<"$loop") 0 0"
    return
  fi
  rm -rf "$work/run"
  # Without native stack samples, as calibrate's loops run.
  loop=$(RLSCOPE_STACK_INTERVAL_US=0 RLSCOPE_PYTHON_HOOK="$mode" "$rlscope" run --quiet \
    --calibration "$out/calibration.json" --out "$work/run" -- "$python" "$script" --case "$case" \
    --iterations "$n" 2>/dev/null | grep '^{' | tail -1)
  local hook='h = (v.get("correction") or {}).get("python_hook") or {}; print(h.get("callbacks", 0), h.get("per_callback_ns", 0))'
  echo "$case $mode $n $(field 'v["elapsed_ns"]' <<<"$loop") $(python3 -c "import json, sys; v = json.load(open(sys.argv[1])); $hook" \
    "$work/run/report.json" 2>/dev/null || echo nan nan)"
}

for spec in "python_call 400000" "python_call_site 1000000"; do
  read -r case n <<<"$spec"
  for ((i = 0; i < reps; i++)); do
    for mode in plain noop all; do one "$case" "$n" "$mode"; done
  done
done | tee "$work/lines.txt"

echo "== medians over $reps rounds: added time and callbacks per loop iteration, per callback"
python3 - "$work/lines.txt" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
iterations = {}  # case: loop iterations, as each line gives them
for line in open(sys.argv[1]):
    fields = line.split()
    try:
        iterations[fields[0]] = int(fields[2])
        runs[(fields[0], fields[1])].append([float(x) for x in fields[3:6]])
    except (ValueError, IndexError):
        continue
print(f"{'loop':<18} {'mode':<5} {'added/iteration':>16} {'callbacks/iteration':>20} {'hook/callback':>14} "
      f"{'added/callback':>15}")
for case, n in iterations.items():
    plain = statistics.median(r[0] for r in runs.get((case, "plain"), [[float("nan")]]))
    for mode in ("noop", "all"):
        rows = runs.get((case, mode))
        if not rows:
            continue
        added = statistics.median(r[0] for r in rows) - plain
        callbacks = statistics.median(r[1] for r in rows)
        hook = statistics.median(r[2] for r in rows)
        per_callback = added / callbacks if callbacks else float("nan")
        print(f"{case:<18} {mode:<5} {added / n:13.1f} ns {callbacks / n:20.2f} {hook:11.1f} ns {per_callback:12.1f} ns")
PY
