#!/usr/bin/env bash
# What CUPTI costs a GPU loop beyond what the calibration prices it at:
# scripts/device/gpu_loops.py's loops (torch and JAX, a sync every step;
# JAX compiling and loading many functions) timed by the program itself,
# start-up aside, unprofiled, profiled without the Python level
# (RLSCOPE_PYTHON_HOOK=off) with and without CUPTI, REPS rounds
# interleaved. For each profiled run, what the correction priced CUPTI's
# calls at (report.json, sites cupti:*). With .device carried;
# CALIBRATION_IN=FILE reuses a calibration. Table last, logs in $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_cupti_cost.log
reps="${REPS:-3}"
fresh_work /tmp/rlscope-cupti-cost
calibration_into_out
loops="$root/scripts/device/gpu_loops.py"
results="$work/results.txt"
for ((i = 1; i <= reps; i++)); do
  for mode in ${MODES:-torch_sync jax_sync jax_compile}; do
    steps=3000
    [[ "$mode" == jax_compile ]] && steps=3000  # 30 functions
    echo "unprofiled $mode $(timeout 300 python3 "$loops" "$mode" "$steps" | tail -1)" | tee -a "$results"
    for config in cupti nocupti; do
      options=()
      [[ "$config" == nocupti ]] && options=(--no-cupti)
      dir="$work/${mode}_${config}_$i"
      line=$(RLSCOPE_PYTHON_HOOK=off timeout 300 "$rlscope" run --quiet --calibration "$out/calibration.json" \
        --out "$dir" "${options[@]}" -- python3 "$loops" "$mode" "$steps" | tail -1)
      priced=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["correction"]["sites"]
print("%.1f ms priced CUPTI" % (sum(s["ns"] for k, s in c.items() if k.startswith("cupti:")) / 1e6))' "$dir/report.json" 2>/dev/null)
      echo "$config $mode $line ($priced)" | tee -a "$results"
    done
  done
done
echo "== summary: loop ms, median of $reps (min..max); priced CUPTI per profiled run"
python3 - "$results" <<'PY'
import collections, re, statistics, sys
times, priced = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) (\S+) \S+ ([\d.]+) ms", line)
    if not m:
        continue
    config, mode, ms = m.group(1), m.group(2), float(m.group(3))
    times[(mode, config)].append(ms)
    p = re.search(r"([\d.]+) ms priced", line)
    if p:
        priced[(mode, config)].append(float(p.group(1)))
for mode in sorted({m for m, _ in times}):
    base = statistics.median(times.get((mode, "unprofiled"), [float("nan")]))
    for config in ("unprofiled", "nocupti", "cupti"):
        v = times.get((mode, config))
        if not v:
            continue
        m = statistics.median(v)
        extra = f"  +{m - base:.1f} ms" if config != "unprofiled" else ""
        pr = f"  priced CUPTI {statistics.median(priced[(mode, config)]):.1f} ms" if priced.get((mode, config)) else ""
        print(f"{mode:<12} {config:<10} {m:9.1f} ms ({min(v):.1f}..{max(v):.1f}){extra}{pr}")
PY
