#!/usr/bin/env bash
# Device check of the Python level on the GPU machine (Python 3.12, torch 2.11,
# jax 0.11), with .device carried (scripts/device/bundle.sh):
#   1. dqn.py --device cuda under rlscope: operations, levels, CUDA API
#   2. ppo.py --device cuda under rlscope
#   3. dqn_jax.py --device cuda under rlscope (Python level; JAX's CUDA work
#      needs CUPTI: the GPU level)
#   4. raw slowdown of dqn.py cuda: plain vs profiled, 2 interleaved pairs
# Full logs in $OUT; a short table is printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_python_level.log

echo "== machine"; python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.is_available())'
echo "== 1. dqn cuda";  "$rlscope" run --out "$out/dqn"  -- python3 "$workloads/dqn.py" --device cuda --steps 1500 --quiet
echo "== 2. ppo cuda";  "$rlscope" run --out "$out/ppo"  -- python3 "$workloads/ppo.py" --device cuda --steps 3000 --quiet
echo "== 3. jax cuda";  "$rlscope" run --out "$out/jax"  -- python3 "$workloads/dqn_jax.py" --device cuda --steps 1500 --quiet
echo "== 4. slowdown"
for i in 1 2; do
  python3 "$workloads/dqn.py" --device cuda --steps 1000 --quiet | tee -a "$out/plain.txt"
  "$rlscope" run --quiet --out "$out/slow_$i" -- python3 "$workloads/dqn.py" --device cuda --steps 1000 --quiet | tee -a "$out/profiled.txt"
done

echo "== summary"
python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
rows = []
for name in ("dqn", "ppo", "jax"):
    try:
        report = json.load(open(os.path.join(out, name, "report.json")))
    except Exception as error:
        rows.append((name, f"no report ({error})"))
        continue
    by = {}
    for r in report["rows"]:
        by[(r["operation"], r["category"])] = by.get((r["operation"], r["category"]), 0) + r["ns"]
    total = sum(by.values()) or 1
    for op in ("simulation", "inference", "backprop", "replay"):
        cats = {c: ns for (o, c), ns in by.items() if o == op}
        if cats:
            rows.append((f"{name} {op}", " ".join(f"{c}={ns / 1e6:.1f}ms" for c, ns in sorted(cats.items()))))
    calls = sum(t["cuda_api_calls"] for p in report["processes"] for t in p["threads"])
    rows.append((f"{name} CUDA API calls", str(calls)))
    rows.append((f"{name} exit / problems", f"{report['exit_code']} / {sum(len(p['problems']) for p in report['processes'])}"))
def walls(file):
    path = os.path.join(out, file)
    return [float(x) for x in re.findall(r"wall_s=([0-9.]+)", open(path).read())] if os.path.exists(path) else []
plain, profiled = walls("plain.txt"), walls("profiled.txt")
if plain and profiled:
    rows.append(("dqn cuda 1000 steps wall_s plain", " ".join(map(str, plain))))
    rows.append(("dqn cuda 1000 steps wall_s profiled", " ".join(map(str, profiled))))
    rows.append(("raw slowdown (min/min)", f"{min(profiled) / min(plain):.2f}x"))
width = max(len(k) for k, _ in rows)
for k, v in rows:
    print(f"{k:<{width}}  {v}")
PY
