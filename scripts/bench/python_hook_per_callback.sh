#!/usr/bin/env bash
# What the Python hook costs a program per callback: the program's wall
# time unprofiled and under `rlscope run`, interleaved, and the hook's own
# time per callback as timed in the run (report.json's
# correction.python_hook, which needs a calibration for this Python).
#
#   python_hook_per_callback.sh RLSCOPE CALIBRATION ROUNDS -- COMMAND...
#
# e.g. with test/e2e/python_programs/stdlib_rl.py 30000 on Python 3.12+
# (a jitted-style wrapped C function called every step). Prints each
# round, then the medians.
set -euo pipefail
rlscope="$1"
calibration="$2"
rounds="$3"
shift 3
[[ "${1:-}" == -- ]] && shift
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

now() { date +%s%N; }
bare=() profiled=() hook=()
for round in $(seq "$rounds"); do
  begin=$(now)
  "$@" >/dev/null 2>&1
  bare+=($(($(now) - begin)))
  "$rlscope" run --quiet --calibration "$calibration" --out "$scratch/run$round" -- "$@" >/dev/null 2>&1
  read -r wall per_callback callbacks < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
h = (r.get("correction") or {}).get("python_hook") or {}
print(r["wall_ns"], h.get("per_callback_ns", "nan"), h.get("callbacks", 0))' "$scratch/run$round/report.json")
  profiled+=("$wall")
  hook+=("$per_callback")
  rm -rf "$scratch/run$round"
  echo "round $round: unprofiled $((bare[-1] / 1000000)) ms, profiled $((wall / 1000000)) ms," \
    "hook ${per_callback%.*} ns a callback ($callbacks callbacks)"
done
python3 - "${bare[*]}" "${profiled[*]}" "${hook[*]}" <<'PY'
import statistics, sys
bare, profiled, hook = ([float(x) for x in arg.split()] for arg in sys.argv[1:])
b, p = statistics.median(bare), statistics.median(profiled)
print(f"median: unprofiled {b / 1e6:.0f} ms, profiled {p / 1e6:.0f} ms ({p / b:.2f}x), "
      f"hook {statistics.median(hook):.1f} ns a callback (range {min(hook):.1f}-{max(hook):.1f})")
PY
