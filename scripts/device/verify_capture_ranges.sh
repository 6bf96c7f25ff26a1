#!/usr/bin/env bash
# Device check of capture windows a program marks, and of what a closed
# window costs, on the GPU machine (Python 3.12 under sys.monitoring,
# torch's real CUDA runtime and CUPTI). Run by the device tool with .device
# carried (scripts/device/bundle.sh):
#   1. torch.cuda.profiler.start()/stop() around steps 200-299 of 600,
#      under --capture-range cudaProfilerApi: 100 steps in the window
#   2. an NVTX range "captured" around the same steps, --capture-range
#      nvtx:captured
#   3. the torch MLP loop's own time unprofiled, under a window that never
#      opens (--delay 3600) and captured whole, ROUNDS interleaved rounds
#   4. scripts/bench/closed_capture.sh's stdlib loop, the same three ways
# Logs to $OUT; a short table last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_capture_ranges.log
py=python3
mlp="$root/scripts/device/torch_nvtx_mlp.py"
rounds="${ROUNDS:-3}"
steps="${STEPS:-4000}"

echo "== machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$py -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'

echo "== 1. cudaProfilerStart/Stop"
"$rlscope" run --quiet --capture-range cudaProfilerApi --out "$out/profiler" -- $py "$mlp" --steps 600 --window profiler 200 100
echo "== 2. an NVTX range"
"$rlscope" run --quiet --capture-range nvtx:captured --out "$out/nvtx" -- $py "$mlp" --steps 600 --window nvtx 200 100

echo "== 3. closed window cost, torch MLP, $steps steps, $rounds rounds"
loop_s() { sed -n 's/.* steps in \([0-9.]*\) s.*/\1/p' | tail -1; }
bare="" closed="" whole=""
for round in $(seq "$rounds"); do
  bare+="$($py "$mlp" --steps "$steps" | loop_s) "
  closed+="$("$rlscope" run --quiet --delay 3600 --out "$out/closed$round" -- $py "$mlp" --steps "$steps" | loop_s) "
  whole+="$("$rlscope" run --quiet --out "$out/whole$round" -- $py "$mlp" --steps "$steps" | loop_s) "
  rm -rf "$out/closed$round/trace" "$out/whole$round/trace"
  echo "round $round: bare $bare| closed $closed| whole $whole"
done

echo "== 4. closed window cost, stdlib loop"
bash "$root/scripts/bench/closed_capture.sh" "$rlscope" $py 200000 "$rounds" | tee "$out/stdlib_closed.txt"

echo "== summary"
$py - "$out" "$bare" "$closed" "$whole" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
rows = []
for name in ("profiler", "nvtx"):
    try:
        r = json.load(open(os.path.join(out, name, "report.json")))
        c = r["capture"]
        rows.append((f"{name}: windows, steps in window / whole run",
                     "%d, %s / %s" % (len(c["windows_ns"]), r["per_step"]["steps"], c["whole_run_steps"])))
        gpu = sum(x["ns"] for x in r["rows"] if x["resource"] == "GPU")
        rows.append((f"{name}: GPU ms in the window", "%.2f" % (gpu / 1e6)))
    except Exception as error:
        rows.append((name, "error: %s" % error))
runs = {k: [float(x) for x in v.split()] for k, v in zip(("bare", "closed", "whole"), sys.argv[2:5])}
if all(runs.values()):
    base = statistics.median(runs["bare"])
    for k in ("bare", "closed", "whole"):
        v = runs[k]
        rows.append((f"torch MLP loop s, {k}", "median %.2f [%.2f-%.2f], %.2fx" % (
            statistics.median(v), min(v), max(v), statistics.median(v) / base)))
try:
    for line in open(os.path.join(out, "stdlib_closed.txt")):
        if line.startswith("| ") and "mode" not in line:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(("stdlib loop, " + cells[0], "%s s [%s], %s" % (cells[1], cells[2], cells[3])))
except Exception as error:
    rows.append(("stdlib loop", "error: %s" % error))
width = max(len(k) for k, _ in rows)
for k, v in rows:
    print(f"{k:<{width}}  {v}")
PY
