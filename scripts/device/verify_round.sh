#!/usr/bin/env bash
# Device check of per-instance statistics, capture windows, the SQLite
# export, compressed traces and the diff's per-step default on the GPU
# machine (Python 3.12 under sys.monitoring, torch's real CUDA runtime and
# CUPTI). Run by the device tool with .device carried (scripts/device/bundle.sh):
#   1. torch_nvtx_mlp.py --steps 300 and 600: instance stats and GPU rows
#   2. a 4000-step loop with --delay 5 --duration 1 (past torch's import): a window of it
#   3. --capture-range api around part of a loop (rlscope.capture())
#   4. export --sqlite, and the headline queries against report.json
#   5. rlscope diff of the 300- and 600-step runs: per step by default
# Logs to $OUT; a short table last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_round.log
py=python3
mlp="$root/scripts/device/torch_nvtx_mlp.py"

echo "== machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$py -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'

echo "== 1. full runs"
"$rlscope" run --out "$out/mlp300" -- $py "$mlp" --steps 300
"$rlscope" run --quiet --out "$out/mlp600" -- $py "$mlp" --steps 600

echo "== 2. a time window"
"$rlscope" run --delay 5 --duration 1 --out "$out/window" -- $py "$mlp" --steps 4000

echo "== 3. an API window"
cat > "$out/api_loop.py" <<'PY'
import rlscope, torch
x = torch.ones(256, 256, device="cuda")
def step(n):
    global x
    for _ in range(n):
        with rlscope.operation("simulation"):
            x = torch.tanh(x @ x * 1e-3)
step(200)
with rlscope.capture():
    step(100)
step(200)
torch.cuda.synchronize()
print("api loop done")
PY
"$rlscope" run --capture-range api --out "$out/api" -- $py "$out/api_loop.py"

echo "== 4. SQLite export"
"$rlscope" export "$out/mlp300" --sqlite "$out/mlp300.db"

echo "== 5. diff"
"$rlscope" diff --format json -o "$out/diff.json" "$out/mlp300" "$out/mlp600"
"$rlscope" diff "$out/mlp300" "$out/mlp600" | head -30

echo "== summary"
$py - "$out" "$root/scripts/sqlite/headline_queries.sql" <<'PY'
import glob, json, os, sqlite3, sys
out, queries_file = sys.argv[1], sys.argv[2]
def load(name):
    try:
        return json.load(open(os.path.join(out, name, "report.json")))
    except Exception as error:
        return {"error": str(error)}
rows = []
for name in ("mlp300", "mlp600"):
    r = load(name)
    if "error" in r:
        rows.append((name, r["error"])); continue
    stats = {s["operation"]: s for p in r["processes"] for s in p["instance_stats"]}
    sim = stats.get("simulation", {})
    rows.append((f"{name}: simulation instances, p50/p95 us", "%s, %.1f/%.1f" % (
        sim.get("instances"), sim.get("p50_ns", 0) / 1e3, sim.get("p95_ns", 0) / 1e3)))
    rows.append((f"{name}: per step, loop us", "%s steps, %.1f" % (
        r["per_step"]["steps"], (r["per_step"]["loop_ns_per_step"] or 0) / 1e3)))
    events = sum(p["events"] for p in r["processes"])
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(out, name, "trace", "*.rlt")))
    rows.append((f"{name}: trace bytes/event", "%.2f (%d events)" % (size / max(events, 1), events)))
w = load("window")
if "capture" in w:
    c = w["capture"]
    rows.append(("window: captured s, windows", "%.2f, %d" % (c.get("captured_ns", 0) / 1e9, len(c.get("windows_ns", [])))))
    rows.append(("window: steps in window / whole run", "%s / %s" % (w["per_step"]["steps"], c.get("whole_run_steps"))))
    rows.append(("window: headline", w["headline"]["findings"][0][:70]))
a = load("api")
if "capture" in a:
    rows.append(("api: windowed, steps in window / whole", "%s, %s / %s" % (
        a["capture"]["windowed"], a["per_step"]["steps"], a["capture"].get("whole_run_steps"))))
    gpu = sum(x["ns"] for x in a["rows"] if x["resource"] == "GPU")
    rows.append(("api: GPU row ms in the window", "%.2f" % (gpu / 1e6)))
try:
    db = sqlite3.connect(os.path.join(out, "mlp300.db"))
    db.row_factory = sqlite3.Row
    text = open(queries_file).read()
    report = load("mlp300")
    for block in text.split("-- name: ")[1:]:
        name, sql = block.split("\n", 1)
        if name.strip() == "gpu_busy":
            got = db.execute(sql).fetchone()["gpu_busy_ns"]
            rows.append(("sqlite gpu_busy == report", "%s (%d vs %d)" % (got == report["gpu_busy_ns"], got, report["gpu_busy_ns"])))
        if name.strip() == "dominant_operation":
            row = db.execute(sql).fetchone()
            rows.append(("sqlite dominant operation", "%s %.1f%%" % (row["operation"], row["percent_of_loop"])))
except Exception as error:
    rows.append(("sqlite", "error: %s" % error))
try:
    d = json.load(open(os.path.join(out, "diff.json")))
    rows.append(("diff: per step, why", "%s, %s" % (d["per_step"], d["per_step_why"][:50])))
except Exception as error:
    rows.append(("diff", "error: %s" % error))
width = max(len(k) for k, _ in rows)
for k, v in rows:
    print(f"{k:<{width}}  {v}")
PY
