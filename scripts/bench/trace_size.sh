#!/usr/bin/env bash
# Trace size benchmark: bytes per event on disk of trace/<pid>.rlt for the
# bundled workloads (PPO, DQN under /usr/bin/python3) and the fake-CUDA
# flood, written plain (--uncompressed-trace: the format before compressed
# blocks) and compressed (the default); then, on the plain trace,
# bench_trace_size's zstd levels -5 to 3 on blocks as sent, with timestamp
# deltas, and with deltas and shuffled events (what rlscope stores), and
# compression MB/s on one core (thread CPU time). Record the
# output, with date and machine, in scripts/bench/RESULTS.md.
#   trace_size.sh [FLOOD_SECONDS]        (default 2)
# Paths: RLSCOPE_BUILD_DIR (default ./build); PYTHON (default /usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
rlscope="$build/bin/rlscope"
bench="$build/bin/bench_trace_size"
flood="$build/test/bin/flood"
seconds="${1:-2}"
python="${PYTHON:-/usr/bin/python3}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# events NAME DIR: events delivered (report.json, all processes).
events() {
  "$python" -c 'import json,sys; print(sum(p["events"] for p in json.load(open(sys.argv[1]))["processes"]))' \
    "$2/report.json"
}

# measure NAME COMMAND...: one plain and one compressed run of COMMAND.
measure() {
  local name="$1"
  shift
  local plain="$scratch/$name-plain" compressed="$scratch/$name-zstd"
  "$rlscope" run --quiet --uncompressed-trace --out "$plain" -- "$@" >/dev/null
  "$rlscope" run --quiet --out "$compressed" -- "$@" >/dev/null
  local plain_bytes compressed_bytes plain_events compressed_events
  plain_bytes=$(cat "$plain"/trace/*.rlt | wc -c)
  compressed_bytes=$(cat "$compressed"/trace/*.rlt | wc -c)
  plain_events=$(events "$name" "$plain")
  compressed_events=$(events "$name" "$compressed")
  "$python" -c 'import sys; n, pb, pe, cb, ce = sys.argv[1], *map(int, sys.argv[2:]); print(
      f"{n}: plain {pb} bytes / {pe} events = {pb / max(pe, 1):.2f} bytes/event; "
      f"compressed {cb} bytes / {ce} events = {cb / max(ce, 1):.2f} bytes/event")' \
    "$name" "$plain_bytes" "$plain_events" "$compressed_bytes" "$compressed_events"
  # The largest plain trace file of the run, through the compressor alone.
  "$bench" "$(ls -S "$plain"/trace/*.rlt | head -1)"
}

measure ppo "$python" "$root/scripts/workloads/ppo.py" --steps 10000
measure dqn "$python" "$root/scripts/workloads/dqn.py" --steps 2000
if [[ -x "$flood" ]]; then
  LD_LIBRARY_PATH="$build/test/fake_cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    measure flood "$flood" --threads 2 --seconds "$seconds" --rate 2e6
fi
