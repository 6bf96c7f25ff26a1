#!/usr/bin/env bash
# Report-stage speed on a real Python run: how long `rlscope report` takes
# for the bundled PPO (scripts/workloads/ppo.py, /usr/bin/python3 with
# Debian's torch), uncorrected and corrected, ROUNDS times each; with
# BASELINE=BIN also another build's `rlscope` (kept before a change, say
# `cp build/bin/rlscope /tmp/rlscope_before`), interleaved with this one
# so the machine's slow stretches fall on both. Checks that both write the
# same report.json, report.txt and report.html. Prints wall milliseconds
# per binary and pass; record them, with date and machine, in
# scripts/bench/RESULTS.md.
#   report_stage.sh [STEPS]     (default: ppo.py's own, 20,000 steps)
# RLSCOPE (default build/bin/rlscope), ROUNDS (default 5), CALIBRATION=FILE
# (default: a `rlscope calibrate --quick` made here, first).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rlscope="${RLSCOPE:-$root/build/bin/rlscope}"
baseline="${BASELINE:-}"
rounds="${ROUNDS:-5}"
python=/usr/bin/python3
for tool in "$rlscope" ${baseline:+"$baseline"} "$python"; do
  [[ -x "$tool" ]] || { echo "report_stage.sh: $tool is missing (build first)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# No calibration of this machine is applied unless asked for.
export XDG_CACHE_HOME="$work/cache"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load before: $(cut -d' ' -f1-3 /proc/loadavg)"

steps=()
[[ $# -ge 1 ]] && steps=(--steps "$1")
"$rlscope" run --quiet --out "$work/run" -- "$python" "$root/scripts/workloads/ppo.py" --quiet "${steps[@]}" \
  >/dev/null
calibration="${CALIBRATION:-}"
if [[ -z "$calibration" ]]; then
  calibration="$work/calibration.json"
  "$rlscope" calibrate --quick --accept-uncertain --calibration "$calibration" --python "$python" >/dev/null 2>&1
fi
events=$("$python" -c 'import json, sys; print(sum(p["events"] for p in json.load(open(sys.argv[1]))["processes"]))' \
  "$work/run/report.json")
echo "run: $events events, trace $(du -sh "$work/run/trace" | cut -f1)"

binaries=("$rlscope")
[[ -n "$baseline" ]] && binaries=("$baseline" "$rlscope")
declare -A times
for ((round = 1; round <= rounds; round++)); do
  for index in "${!binaries[@]}"; do
    for pass in uncorrected corrected; do
      dir="$work/copy$index"
      rm -rf "$dir" && cp -r "$work/run" "$dir"
      options=()
      [[ "$pass" == corrected ]] && options=(--calibration "$calibration")
      begin=$(date +%s%N)
      "${binaries[$index]}" report "${options[@]}" "$dir" >/dev/null 2>&1
      end=$(date +%s%N)
      times["$index $pass"]+=" $(((end - begin) / 1000000))"
    done
  done
done
if [[ -n "$baseline" ]]; then
  for file in report.json report.txt report.html; do
    cmp -s "$work/copy0/$file" "$work/copy1/$file" && echo "$file: identical" || echo "$file: DIFFERS"
  done
fi
for index in "${!binaries[@]}"; do
  for pass in uncorrected corrected; do
    echo "${binaries[$index]} $pass (ms):${times["$index $pass"]}"
  done
done
