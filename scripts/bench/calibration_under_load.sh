#!/usr/bin/env bash
# Does a calibration made on a loaded machine hurt corrections? Calibrates
# on the machine as it is ("quiet": keep it so), then again with two CPU
# hogs running (`sh -c 'while :; do :; done'`, ended by `timeout` and
# killed on exit whatever happens), and reports whether the loaded one was
# refused; if it was stored, how its costs differ from the quiet ones and
# how the corrected wall time of one same profiled run (dqn.py) differs
# between the two (target: within 2 % of the wall time). Record the output,
# with the date and machine, in scripts/bench/RESULTS.md.
#
#   scripts/bench/calibration_under_load.sh   (QUICK=1: --quick sweeps)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
rlscope="$build/bin/rlscope"
python="${PYTHON:-/usr/bin/python3}"
quick=()
[[ "${QUICK:-0}" == 1 ]] && quick=(--quick)
work="$(mktemp -d)"
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_CACHE_HOME="$work/cache"  # Never the user's calibration.

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load before: $(cut -d' ' -f1-3 /proc/loadavg)"

"$rlscope" calibrate "${quick[@]}" --python "$python" --calibration "$work/quiet.json" 2>"$work/quiet.log" || {
  echo "the quiet calibration was refused or failed (is the machine quiet?):"
  tail -n 12 "$work/quiet.log"
  exit 1
}
echo "quiet:  $(grep 'seen meanwhile' "$work/quiet.log" | sed 's/^rlscope calibrate: //')"

for _ in 1 2; do
  timeout 900 sh -c 'while :; do :; done' &
  hogs+=("$!")
done
status=0
"$rlscope" calibrate "${quick[@]}" --python "$python" --calibration "$work/loaded.json" 2>"$work/loaded.log" || status=$?
for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
wait "${hogs[@]}" 2>/dev/null || true
hogs=()
echo "loaded: $(grep 'seen meanwhile' "$work/loaded.log" | sed 's/^rlscope calibrate: //')"
grep -E 'measuring again' "$work/loaded.log" | sed 's/^ */  re-measured: /' || true
if [[ $status -ne 0 ]]; then
  echo "loaded calibration: exit $status, not stored:"
  sed -n '/REFUSED/,$p' "$work/loaded.log"
  [[ $status -eq 1 ]] && grep -q REFUSED "$work/loaded.log" && exit 0
  exit 1
fi
echo "loaded calibration: stored ($(grep -o 'verdict: [a-z-]*' "$work/loaded.log"))"

# One profiled run, corrected once by each calibration.
"$rlscope" run --quiet --out "$work/run" -- "$python" "$root/scripts/workloads/dqn.py" --steps 1000 --quiet >/dev/null
for which in quiet loaded; do
  cp -r "$work/run" "$work/run-$which"
  "$rlscope" report --quiet --calibration "$work/$which.json" "$work/run-$which" >/dev/null
done
"$python" - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
load = lambda name: json.load(open(os.path.join(work, name)))
quiet, loaded = load("quiet.json")["costs"], load("loaded.json")["costs"]
print("%-28s %14s %14s %8s" % ("cost", "quiet", "loaded", "ratio"))
for site in sorted(set(quiet) | set(loaded)):
    q, l = quiet.get(site), loaded.get(site)
    fmt = lambda c: "-" if c is None else ("%.3f ms" % (c["ns"] / 1e6) if "_process" in site
                                            else "%.1f ns" % c["ns"])
    ratio = "%.2fx" % (l["ns"] / q["ns"]) if q and l and q["ns"] > 0 and l["ns"] > 0 else "-"
    print("%-28s %14s %14s %8s" % (site, fmt(q), fmt(l), ratio))
reports = {which: load(os.path.join("run-" + which, "report.json")) for which in ("quiet", "loaded")}
wall = reports["quiet"]["wall_ns"]
corrected = {which: r.get("corrected_wall_ns") for which, r in reports.items()}
if None in corrected.values():
    print("a report was not corrected:", {w: r["correction"]["message"] for w, r in reports.items()})
    sys.exit(1)
diff = corrected["loaded"] - corrected["quiet"]
print("dqn.py --steps 1000: wall %.3f s; corrected %.3f s (quiet calibration), %.3f s (loaded): "
      "differ by %+.2f %% of the wall time (target within 2 %%)"
      % (wall / 1e9, corrected["quiet"] / 1e9, corrected["loaded"] / 1e9, 100 * diff / wall))
PY
