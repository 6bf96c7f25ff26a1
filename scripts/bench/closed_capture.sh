#!/usr/bin/env bash
# What a closed capture window costs the program: the loop time of
# closed_capture_loop.py (its own perf_counter, so rlscope run's start and
# end are left out) unprofiled, under a window that never opens
# (`--delay 3600`) and captured whole, interleaved.
#
#   closed_capture.sh RLSCOPE PYTHON [STEPS] [ROUNDS]
#
# Prints each run's loop time, then per mode the median and the range, and
# the median's ratio to the unprofiled one.
set -euo pipefail
rlscope="$1"
python="$2"
steps="${3:-20000}"
rounds="${4:-5}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
program="$here/closed_capture_loop.py"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

loop_time() { sed -n 's/^loop_s //p' | tail -1; }
declare -A times=([bare]="" [closed]="" [whole]="")
for round in $(seq "$rounds"); do
  t=$("$python" "$program" "$steps" | loop_time)
  times[bare]+="$t "
  t=$("$rlscope" run --quiet --delay 3600 --out "$scratch/closed$round" -- "$python" "$program" "$steps" | loop_time)
  times[closed]+="$t "
  t=$("$rlscope" run --quiet --out "$scratch/whole$round" -- "$python" "$program" "$steps" | loop_time)
  times[whole]+="$t "
  rm -rf "$scratch/closed$round" "$scratch/whole$round"
done
python3 - "${times[bare]}" "${times[closed]}" "${times[whole]}" "$("$python" -c 'import sys; print(sys.version.split()[0])')" "$steps" <<'PY'
import statistics, sys
bare, closed, whole = ([float(x) for x in arg.split()] for arg in sys.argv[1:4])
print(f"python {sys.argv[4]}, {sys.argv[5]} steps, {len(bare)} interleaved rounds")
print("runs (loop s): bare", bare, "closed", closed, "whole", whole)
base = statistics.median(bare)
print("| mode | median loop s | range | median / unprofiled |")
print("|---|---|---|---|")
for name, runs in (("unprofiled", bare), ("closed window (--delay 3600)", closed), ("whole capture", whole)):
    median = statistics.median(runs)
    print(f"| {name} | {median:.3f} | {min(runs):.3f}-{max(runs):.3f} | {median / base:.2f}x |")
PY
