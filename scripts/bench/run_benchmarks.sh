#!/usr/bin/env bash
# Runs rlscope's benchmarks and prints a table (record it, with the date and
# machine, in scripts/bench/RESULTS.md):
#   1. cost per intercepted CUDA runtime call over the bare call (fake
#      runtime returning at once; CUPTI not involved)
#   2. analysis throughput (events/s, one core) and trace bytes per event
#   3. trace bytes per event of a real run (the NVTX client)
#   4. cost per call through a simulator trampoline over the bare call
#      (libsimtest's simtest_add through the PLT): recorded outermost calls,
#      and nested calls (the pass-through path)
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

# 1b. Python hook cost: 3 interleaved plain/profiled runs of
# bench_python_hook.py; per kind, the call's own time (minus the loop's)
# profiled minus plain, from the minimum over bursts; median of the 3 runs.
python_costs=$(
  for i in 1 2 3; do
    echo "plain $(/usr/bin/python3 "$root/scripts/bench/bench_python_hook.py" | tr '\n' ' ')"
    echo "profiled $("$rlscope" run --quiet --out "$work/python-$i" -- /usr/bin/python3 \
      "$root/scripts/bench/bench_python_hook.py" 2>/dev/null | tr '\n' ' ')"
  done | python3 -c '
import statistics, sys
runs = {"plain": [], "profiled": []}
for line in sys.stdin:
    words = line.split()
    runs[words[0]].append({words[i]: float(words[i + 1]) for i in range(1, len(words), 3)})
for kind in ("extension_c_call", "builtin_c_call", "python_call"):
    costs = [(p[kind] - p["loop_overhead"]) - (q[kind] - q["loop_overhead"])
             for p, q in zip(runs["profiled"], runs["plain"])]
    print(kind, f"{statistics.median(costs):.1f}", " ".join(f"{c:.1f}" for c in costs))
loop = statistics.median(p["loop_overhead"] - q["loop_overhead"] for p, q in zip(runs["profiled"], runs["plain"]))
print("python_call_absolute", f"{loop:.1f}")
')
echo "$python_costs" | sed 's/^/python hook: /'

# 1c. Raw slowdown of the bundled workloads (median of 3 interleaved pairs).
slowdown=$(python3 "$root/scripts/bench/bench_workload_slowdown.py" "$rlscope" "$root/scripts/workloads" 3)
echo "$slowdown" | sed 's/^/workload slowdown: /'

# 2. Analysis throughput on a synthetic 20 M-event trace.
analysis=$("$build/bin/bench_analysis" 20000000 "$work/analysis")
echo "$analysis" | sed 's/^/analysis: /'

# 2b. Sorting a thread's decoded CPU events (recorded as they end).
"$build/bin/bench_sort_events" | sed 's/^/sort events: /'

# 3. Bytes per event of a real run.
"$rlscope" run --quiet --out "$work/client" -- "$build/test/fake_cuda/nvtx_client" --steps 2000 >/dev/null
bytes=$(cat "$work/client"/trace/*.rlt | wc -c)
events=$(python3 -c "import json,sys; print(sum(p['events'] for p in json.load(open(sys.argv[1]))['processes']))" "$work/client/report.json")
echo "nvtx_client trace: $bytes bytes, $events events"

# 4. Simulator trampolines: alternate bare and hooked runs, 5 each.
sim_bare=(); sim_hooked=()
for i in 1 2 3 4 5; do
  sim_bare+=("$("$build/bin/bench_sim_call" 60)")
  sim_hooked+=("$("$rlscope" run --quiet --out "$work/sim-$i" --sim '*libsimtest*:simtest_*' -- "$build/bin/bench_sim_call" 60)")
done
column() { local n=$1; shift; printf '%s\n' "$@" | awk -v n="$n" '{print $n}' | median; }
sim_bare_ns=$(column 1 "${sim_bare[@]}"); sim_hooked_ns=$(column 1 "${sim_hooked[@]}")
sim_bare_nested_ns=$(column 2 "${sim_bare[@]}"); sim_nested_ns=$(column 2 "${sim_hooked[@]}")
printf 'sim call, bare:           %s ns (runs, outer/nested: %s)\n' "$sim_bare_ns" "$(printf '%s ' "${sim_bare[@]/ //}")"
printf 'sim call, trampoline:     %s ns recorded, %s ns nested (runs: %s)\n' "$sim_hooked_ns" "$sim_nested_ns" \
  "$(printf '%s ' "${sim_hooked[@]/ //}")"

echo
echo "| benchmark | result | goal |"
echo "|---|---|---|"
awk -v b="$bare_ns" -v h="$hooked_ns" 'BEGIN { printf "| cost per intercepted CUDA call (median of 5 runs) | %.1f ns (bare %.1f, intercepted %.1f) | <= 25 ns |\n", h-b, b, h }'
echo "$python_costs" | awk '$1 == "extension_c_call" { printf "| Python hook: added cost per recorded Python->native call | %s ns | <= 40 ns |\n", $2 }'
echo "$python_costs" | awk '$1 == "builtin_c_call" { printf "| Python hook: added cost per call of an interpreter builtin (not recorded) | %s ns | - |\n", $2 }'
echo "$python_costs" | awk '$1 == "python_call_absolute" { printf "| Python hook: added cost per Python function call (CALL+RETURN) | %s ns | - |\n", $2 }'
echo "$slowdown" | awk '{ printf "| raw slowdown, %s (training loop wall_s; whole command) | %.2fx (%.2f -> %.2f s); %.2fx (%.2f -> %.2f s) | - |\n", $1, $4, $2, $3, $7, $5, $6 }'
echo "$analysis" | awk '/events_per_second/ { printf "| analysis throughput, one core | %.1f M events/s | >= 20 M events/s |\n", $2/1e6 }'
echo "$analysis" | awk '/bytes_per_event/ { printf "| trace bytes per event (synthetic) | %s | - |\n", $2 }'
awk -v b="$bytes" -v e="$events" 'BEGIN { printf "| trace bytes per event (nvtx_client run) | %.1f | - |\n", b/e }'
awk -v b="$sim_bare_ns" -v h="$sim_hooked_ns" 'BEGIN { printf "| cost per recorded simulator call, trampoline (median of 5 runs) | %.1f ns (bare %.1f, hooked %.1f) | <= 10 ns |\n", h-b, b, h }'
awk -v b="$sim_bare_nested_ns" -v h="$sim_nested_ns" 'BEGIN { printf "| cost per nested (pass-through) simulator call | %.1f ns (bare %.1f, hooked %.1f) | - |\n", h-b, b, h }'
