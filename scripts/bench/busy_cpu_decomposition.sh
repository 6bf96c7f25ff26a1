#!/usr/bin/env bash
# Where the correction's bias on a busy CPU comes from. Runs the fake CUDA
# client (5 us CUPTI callbacks) unprofiled and under `rlscope run`, PAIRS
# times interleaved, and reads the client's main thread's schedstat just
# before it exits (time run, time waited for a CPU). Unprofiled wall time is
# ran * (1 + waited/ran); the profiled run's is (ran + hooks) * (1 +
# waited/ran) of its own; the correction removes the hooks' CPU time scaled
# by the waits. So it can be off by (a) hooks priced wrong (compare the
# extra CPU time with what report.json's correction priced in CPU time,
# estimated_ns - cpu_wait_ns) or (b) the profiled run's waits per ns run
# differing from the unprofiled run's (the machine's load changing between
# runs, or rlscope's own threads adding to it). Prints one line per run and
# the means of both. Run it beside whatever makes the machine busy.
#
#   scripts/bench/busy_cpu_decomposition.sh BUILD CALIBRATION
#   env: PAIRS (5), STEPS (600), HOGS (0: busy loops of its own), CPUS
#   (a taskset list: both runs, rlscope's collector and the hogs pinned
#   there, so the contention is the same from run to run). CALIBRATION: made with
#   RLSCOPE_FAKE_CUPTI_CALLBACK_NS=5000 set (as correction_on_busy_cpu.sh
#   does), so that the fake CUPTI's callbacks are priced as they cost.
set -euo pipefail
build="$(cd "${1:?usage: busy_cpu_decomposition.sh BUILD CALIBRATION}" && pwd)"
calibration="${2:?usage: busy_cpu_decomposition.sh BUILD CALIBRATION}"
pairs="${PAIRS:-5}" steps="${STEPS:-600}" hogs="${HOGS:-0}"
pin=()
[[ -n "${CPUS:-}" ]] && pin=(taskset -c "$CPUS")
export RLSCOPE_FAKE_CUPTI_CALLBACK_NS=5000 RLSCOPE_FAKE_CUDART_SCALE=1
work="$(mktemp -d /tmp/rlscope-busy-decomposition.XXXXXX)"
hog_pids=()
cleanup() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for ((i = 0; i < hogs; i++)); do
  "${pin[@]}" sh -c 'while :; do :; done' &
  hog_pids+=($!)
done
client="$build/test/fake_cuda/nvtx_client"
# last_schedstat: the client's main thread's schedstat, read until it exits.
last_schedstat() {
  local pid="" last=""
  for _ in $(seq 500); do
    pid=$(pgrep -x nvtx_client | head -1 || true)
    [[ -n "$pid" ]] && break
    sleep 0.005
  done
  while [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; do
    last=$(cat "/proc/$pid/task/$pid/schedstat" 2>/dev/null || echo "$last")
    sleep 0.01
  done
  echo "$last"
}
echo "date: $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $hogs hogs, CPUS=${CPUS:-all}"
for ((i = 1; i <= pairs; i++)); do
  LD_LIBRARY_PATH="$build/test/fake_cuda/cupti" "${pin[@]}" "$client" --steps "$steps" > /dev/null 2>&1 &
  run=$!
  echo "u $(last_schedstat)" >> "$work/runs"
  wait "$run"
  rm -rf "$work/p"
  "${pin[@]}" "$build/bin/rlscope" run --quiet --calibration "$calibration" --cupti "$build/test/fake_cuda/cupti/libcupti.so.13" \
    --out "$work/p" -- "$client" --steps "$steps" > /dev/null 2>&1 &
  run=$!
  stat=$(last_schedstat)
  wait "$run"
  echo "p $stat $(python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['correction']
print(c['estimated_ns'], c.get('cpu_wait_ns', 0))" "$work/p/report.json")" >> "$work/runs"
done
python3 - "$work/runs" <<'PY'
import statistics, sys
u, p = [], []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3:
        continue
    ran, waited = int(f[1]) / 1e6, int(f[2]) / 1e6
    (u if f[0] == "u" else p).append((ran, waited, *(int(x) / 1e6 for x in f[4:6])))
for name, runs in (("unprofiled", u), ("profiled", p)):
    for r in runs:
        extra = f", priced in CPU time {r[2] - r[3]:.1f} ms, scaled by waits to {r[2]:.1f} ms" if len(r) > 2 else ""
        print(f"{name}: ran {r[0]:.1f} ms, waited {r[1]:.1f} ms, waited/ran {r[1] / r[0]:.2f}{extra}")
ratio = lambda runs: statistics.mean(r[1] / r[0] for r in runs)
print(f"mean waited/ran: unprofiled {ratio(u):.3f}, profiled {ratio(p):.3f}")
hooks = statistics.mean(r[0] for r in p) - statistics.mean(r[0] for r in u)
priced = statistics.mean(r[2] - r[3] for r in p)
print(f"hooks' CPU time (profiled ran - unprofiled ran, means) {hooks:.1f} ms; priced {priced:.1f} ms")
# Each pair's bias as the schedstats tell it: the profiled thread's
# running and waiting less what the correction removed, against the
# unprofiled thread's (time blocked, which this client hardly has, left out).
biases = [((pr[0] + pr[1] - pr[2]) / (ur[0] + ur[1]) - 1) * 100 for ur, pr in zip(u, p)]
print("bias from the schedstats, per pair: " + " ".join(f"{b:+.1f}" for b in biases) + " %")
sd = statistics.stdev(biases) if len(biases) > 1 else 0.0
print(f"bias from the schedstats: mean {statistics.mean(biases):+.2f} %, sd {sd:.2f}, standard error {sd / len(biases) ** 0.5:.2f}")
PY
