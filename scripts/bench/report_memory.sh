#!/usr/bin/env bash
# Report-stage memory benchmark: what `rlscope report` needs for a large
# trace. Profiles the event flood (THREADS threads calling a hooked CUDA
# entry point of the fake runtime for SECONDS s, --no-cupti), then reports
# the run three times under /usr/bin/time: uncorrected, corrected (with
# CALIBRATION, or a `rlscope calibrate --quick` made here) and an export
# to CSV. Prints, per pass, the peak RSS, bytes per delivered event and the
# wall time. Record the output, with date and machine, in
# scripts/bench/RESULTS.md.
#   report_memory.sh [SECONDS [THREADS]]    (default 2 s, 4 threads)
# Paths: RLSCOPE_BUILD_DIR (default ./build), or RLSCOPE and FLOOD for the
# two binaries; CALIBRATION=FILE to skip the
# quick calibration. The trace takes ~31 bytes per event on disk (2 s of
# 4 threads here: ~20 M events, 611 MB) under a temporary directory
# (TMPDIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
rlscope="${RLSCOPE:-$build/bin/rlscope}"
flood="${FLOOD:-$build/test/bin/flood}"
seconds="${1:-2}"
threads="${2:-4}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for tool in "$rlscope" "$flood" /usr/bin/time; do
  [[ -x "$tool" ]] || { echo "report_memory.sh: $tool is missing (build first; /usr/bin/time: apt install time)" >&2; exit 1; }
done

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# The flood: every call one record (no busy window, no stack samples).
export RLSCOPE_FAKE_CUDART_SCALE=0 RLSCOPE_STACK_INTERVAL_US=0
# XDG_CACHE_HOME: no calibration of this machine is applied or copied, so
# the uncorrected pass is really uncorrected.
export XDG_CACHE_HOME="$work/cache"
"$rlscope" run --quiet --no-cupti --out "$work/run" -- \
  "$flood" --threads "$threads" --seconds "$seconds" --rate 1e7 >/dev/null
calibration="${CALIBRATION:-}"
if [[ -z "$calibration" ]]; then
  calibration="$work/calibration.json"
  # Its quality does not matter to memory: stored even if uncertain.
  "$rlscope" calibrate --quick --accept-uncertain --calibration "$calibration" >/dev/null 2>&1
fi

peak() {  # peak RSS (kB) and wall seconds of a command, as "KB SECONDS"
  /usr/bin/time -f '%M %e' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
    cat "$work/err" >&2
    exit 1
  }
  cat "$work/time"
}
trace_bytes=$(du -cb "$work/run/trace"/*.rlt | tail -1 | cut -f1)
read -r kb_plain s_plain < <(peak "$rlscope" report "$work/run")
events=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(p["events"] for p in r["processes"]))' \
  "$work/run/report.json")
read -r kb_corrected s_corrected < <(peak "$rlscope" report --calibration "$calibration" "$work/run")
read -r kb_csv s_csv < <(peak "$rlscope" export "$work/run" --csv "$work/rows.csv")

row() { awk -v kb="$2" -v e="$events" -v s="$3" -v name="$1" \
  'BEGIN { printf "%-34s %8.0f MB %6.1f B/event %6.2f s\n", name, kb / 1024, kb * 1024 / e, s }'; }
echo "events delivered: $events, trace $((trace_bytes / 1048576)) MiB"
row "report, uncorrected" "$kb_plain" "$s_plain"
row "report, corrected" "$kb_corrected" "$s_corrected"
row "export --csv" "$kb_csv" "$s_csv"
