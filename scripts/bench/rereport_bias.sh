#!/usr/bin/env bash
# A change to the report stage's correction, measured on the same runs:
# re-reports every profiled run an `rlscope validate --out DIR` kept (in
# place: each run's report files are rewritten), with each of the given
# rlscope binaries and one calibration, and prints each
# binary's bias of the corrected wall time against the unprofiled runs
# (the mean of the pairs, their spread, and the bias of the means, as
# validate computes them). The runs are the same for every binary, so the
# difference between them is the correction's alone, free of the run-to-run
# noise that two validate runs would add. The runs' report files are left
# as the last binary wrote them.
#
#   scripts/bench/rereport_bias.sh VALIDATE_DIR CALIBRATION RLSCOPE...
#   e.g. taskset -c 1 rlscope validate -n 8 --out /tmp/v ... -- ./client
#        scripts/bench/rereport_bias.sh /tmp/v cal.json old/rlscope build/bin/rlscope
set -euo pipefail
usage="usage: rereport_bias.sh VALIDATE_DIR CALIBRATION RLSCOPE..."
dir="${1:?$usage}" calibration="${2:?$usage}"
shift 2
(($# > 0)) || { echo "$usage" >&2; exit 2; }
[[ -f "$dir/validate.json" ]] || { echo "rereport_bias.sh: no validate.json in $dir" >&2; exit 2; }
work="$(mktemp -d /tmp/rlscope-rereport.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# Each repetition's unprofiled wall time and profiled run directory
# (named relative to validate's --out).
python3 - "$dir/validate.json" > "$work/runs" <<'PY'
import json, os, sys
validate = sys.argv[1]
for rep in json.load(open(validate))["repetitions"]:
    print(rep["unprofiled_wall_ns"], os.path.join(os.path.dirname(validate), rep["run_dir"]))
PY
[[ -s "$work/runs" ]] || { echo "rereport_bias.sh: $dir/validate.json lists no repetitions" >&2; exit 1; }
for rlscope in "$@"; do
  : > "$work/pairs"
  while read -r unprofiled run; do
    "$rlscope" report --quiet --calibration "$calibration" "$run" < /dev/null > "$work/report.log" 2>&1 ||
      { echo "rereport_bias.sh: $rlscope report $run failed:" >&2; cat "$work/report.log" >&2; exit 1; }
    python3 - "$run/report.json" "$unprofiled" >> "$work/pairs" <<'PY'
import json, sys
corrected = json.load(open(sys.argv[1])).get("corrected_wall_ns")
if corrected is None:
    sys.exit("no corrected_wall_ns in " + sys.argv[1])
print(sys.argv[2], corrected)
PY
  done < "$work/runs"
  python3 - "$work/pairs" "$rlscope" <<'PY'
import statistics, sys
pairs = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
biases = [100 * (c - u) / u for u, c in pairs]
sd = statistics.stdev(biases) if len(biases) > 1 else 0.0
of_means = 100 * (statistics.mean(c for _, c in pairs) / statistics.mean(u for u, _ in pairs) - 1)
print(f"{sys.argv[2]}: {len(pairs)} pairs, bias mean {statistics.mean(biases):+.2f} % "
      f"(sd {sd:.2f}, standard error {sd / len(biases) ** 0.5:.2f}), of the means {of_means:+.2f} %; "
      "per pair " + " ".join(f"{b:+.1f}" for b in biases))
PY
done
