#!/usr/bin/env bash
# Many-rank benchmark: a data-parallel job of RANKS processes over
# torch.distributed's gloo backend (test/e2e/python_programs/ranks_worker.py
# through torch.multiprocessing.spawn, STEPS training steps per rank; rank 1
# is slowed on purpose), run unprofiled and under `rlscope run`, PAIRS times
# interleaved. Prints per pair the wall times and the collector's peak RSS
# (rlscope run's own process, which also analyses the trace at the end),
# then, of the last profiled run, the events delivered and dropped, the
# ranks and collectives the job view found, and the time and peak memory of
# `rlscope report` on the run. Record the output, with date and machine, in
# scripts/bench/RESULTS.md.
#   ranks.sh [RANKS [STEPS [PAIRS]]]      (default 16 ranks, 30 steps, 2 pairs)
# Paths: RLSCOPE_BUILD_DIR (default ./build) or RLSCOPE; PYTHON, an
# interpreter with torch.distributed and gloo (default /usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rlscope="${RLSCOPE:-${RLSCOPE_BUILD_DIR:-$root/build}/bin/rlscope}"
python="${PYTHON:-/usr/bin/python3}"
ranks="${1:-16}"
steps="${2:-30}"
pairs="${3:-2}"
worker="$root/test/e2e/python_programs/ranks_worker.py"
[[ -x "$rlscope" ]] || { echo "ranks.sh: $rlscope is missing (build first, or set RLSCOPE)" >&2; exit 1; }
"$python" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' 2>/dev/null || {
  echo "ranks.sh: $python has no torch.distributed with gloo (set PYTHON)" >&2
  exit 1
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "job: $ranks ranks x $steps steps, $("$python" -c 'import sys, torch; print("Python %d.%d, torch %s" % (sys.version_info[:2] + (torch.__version__,)))')"

measured() {  # a command's own peak RSS (kB) and wall seconds, as "KB SECONDS" in $work/measured
  # Its VmHWM, read while it runs: it only grows, and the last reading,
  # taken at most 0.1 s before it ends, stands for the peak. (GNU time's
  # peak would be the largest process of the tree: a rank, not rlscope.)
  local begin=$EPOCHREALTIME peak=0 now
  "$@" >"$work/stdout" 2>"$work/err" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    now=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n "$now" ]] && peak=$now
    sleep 0.1
  done
  wait "$pid" || { tail -20 "$work/err" >&2; exit 1; }
  echo "$peak $(awk -v a="$begin" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')" >"$work/measured"
}
# A fresh port per run: a rendezvous port still in TIME_WAIT fails the next.
port=$((29500 + RANDOM % 2000))
printf '%-6s %12s %12s %10s %18s\n' pair "plain s" "profiled s" ratio "collector peak MB"
for pair in $(seq 1 "$pairs"); do
  port=$((port + 1))
  export MASTER_PORT=$port
  measured "$python" "$worker" "$steps" --spawn "$ranks"
  read -r _ s_plain <"$work/measured"
  port=$((port + 1))
  rm -rf "$work/run"
  export MASTER_PORT=$port
  measured "$rlscope" run --quiet --out "$work/run" -- "$python" "$worker" "$steps" --spawn "$ranks"
  read -r kb_run s_run <"$work/measured"
  awk -v p="$pair" -v a="$s_plain" -v b="$s_run" -v kb="$kb_run" \
    'BEGIN { printf "%-6s %12.2f %12.2f %9.2fx %18.1f\n", p, a, b, b / a, kb / 1024 }'
done
measured "$rlscope" report "$work/run"
read -r kb_report s_report <"$work/measured"
"$python" - "$work/run/report.json" "$kb_report" "$s_report" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
processes = report["processes"]
events = sum(p["events"] for p in processes)
dropped = sum(p["dropped_events"] for p in processes)
jobs = report.get("jobs", [])
print("last profiled run: %d processes, %d events delivered, %d dropped (%.3f %%)"
      % (len(processes), events, dropped, 100.0 * dropped / max(1, events + dropped)))
for job in jobs:
    talk = job["communication"]
    print("job: %d ranks of %d (%s), %d collectives, lined up: %s"
          % (len(job["ranks"]), job["world_size"], job["launcher"], talk["collectives"], talk["lined_up"]))
if not jobs:
    print("job: none found")
print("rlscope report: %s s, peak %.1f MB" % (sys.argv[3], int(sys.argv[2]) / 1024))
PY
