#!/usr/bin/env bash
# The correction's targets on this machine: `rlscope calibrate` (unless the
# machine has a calibration already; FRESH=1 forces one), then
# `rlscope validate -n N` of the bundled CPU workloads: raw overhead and the
# bias of the corrected wall time, each with its spread. Prints a table
# (record it, with the date and machine, in scripts/bench/RESULTS.md).
# Keep the machine otherwise quiet: the figures are only as good as that.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
rlscope="$build/bin/rlscope"
python="${PYTHON:-/usr/bin/python3}"
reps="${REPS:-6}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
if [[ "${FRESH:-0}" == 1 ]]; then
  start=$(date +%s)
  "$rlscope" calibrate --python "$python"
  echo "calibrate: $(( $(date +%s) - start )) s"
fi
for workload in "dqn.py --steps 1000" "ppo.py --steps 2000"; do
  name="${workload%%.py*}"
  # shellcheck disable=SC2086
  "$rlscope" validate -n "$reps" --out "$work/$name" -- "$python" "$root/scripts/workloads/"$workload --quiet \
    > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
done
"$python" - "$work" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "validate.json"))):
    v = json.load(open(path))
    s = v["summary"]
    raw, bias = s["raw_overhead"], s["bias"]
    line = "%-4s raw %.3fx [%.3f..%.3f] sd %.3f" % (os.path.basename(os.path.dirname(path)), raw["mean"], raw["min"],
                                                   raw["max"], raw["stddev"])
    if bias["mean"] is None:
        line += "  uncorrected: " + v["correction_message"]
    else:
        line += "  bias %+.2f%% [%+.2f..%+.2f] sd %.2f%%  bias of means %+.2f%%" % (
            100 * bias["mean"], 100 * bias["min"], 100 * bias["max"], 100 * bias["stddev"], 100 * s["bias_of_means"])
    print(line)
PY
