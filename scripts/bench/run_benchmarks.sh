#!/usr/bin/env bash
# Runs rlscope's benchmarks and prints a table (record it, with the date and
# machine, in scripts/bench/RESULTS.md):
#   1. cost per intercepted CUDA runtime call over the bare call (fake
#      runtime returning at once; CUPTI not involved)
#   2. analysis throughput (events/s, one core) and trace bytes per event
#   3. trace bytes per event of a real run (the NVTX client)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
rlscope="$build/bin/rlscope"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"

# 1. Interception cost: alternate bare and intercepted runs, 5 each.
export RLSCOPE_FAKE_CUDART_SCALE=0
bare=(); intercepted=()
for i in 1 2 3 4 5; do
  bare+=("$("$build/bin/bench_cuda_call" 100)")
  intercepted+=("$("$rlscope" run --quiet --out "$work/call-$i" -- "$build/bin/bench_cuda_call" 100)")
done
unset RLSCOPE_FAKE_CUDART_SCALE
bare_ns=$(printf '%s\n' "${bare[@]}" | median)
hooked_ns=$(printf '%s\n' "${intercepted[@]}" | median)
printf 'cuda call, bare:          %s ns (runs: %s)\n' "$bare_ns" "${bare[*]}"
printf 'cuda call, intercepted:   %s ns (runs: %s)\n' "$hooked_ns" "${intercepted[*]}"

# 2. Analysis throughput on a synthetic 20 M-event trace.
analysis=$("$build/bin/bench_analysis" 20000000 "$work/analysis")
echo "$analysis" | sed 's/^/analysis: /'

# 3. Bytes per event of a real run.
"$rlscope" run --quiet --out "$work/client" -- "$build/test/fake_cuda/nvtx_client" --steps 2000 >/dev/null
bytes=$(cat "$work/client"/trace/*.rlt | wc -c)
events=$(python3 -c "import json,sys; print(sum(p['events'] for p in json.load(open(sys.argv[1]))['processes']))" "$work/client/report.json")
echo "nvtx_client trace: $bytes bytes, $events events"

echo
echo "| benchmark | result | goal |"
echo "|---|---|---|"
awk -v b="$bare_ns" -v h="$hooked_ns" 'BEGIN { printf "| cost per intercepted CUDA call (median of 5 runs) | %.1f ns (bare %.1f, intercepted %.1f) | <= 25 ns |\n", h-b, b, h }'
echo "$analysis" | awk '/events_per_second/ { printf "| analysis throughput, one core | %.1f M events/s | >= 20 M events/s |\n", $2/1e6 }'
echo "$analysis" | awk '/bytes_per_event/ { printf "| trace bytes per event (synthetic) | %s | - |\n", $2 }'
awk -v b="$bytes" -v e="$events" 'BEGIN { printf "| trace bytes per event (nvtx_client run) | %.1f | - |\n", b/e }'
