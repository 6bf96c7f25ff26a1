#!/usr/bin/env bash
# Device check of the GPU level through CUPTI on the GPU machine,
# with .device carried (scripts/device/bundle.sh):
#   1-3. dqn.py, ppo.py (torch) and dqn_jax.py with --device cuda under
#        rlscope: GPU capture state, kernels vs launches, attribution, GPU
#        time and GPU-busy fraction per operation, nvidia-smi alongside
#   4.   raw overhead: plain vs profiled vs profiled --no-cupti, interleaved
# Full logs and run directories in $OUT; a short table is printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_gpu.log
# A hang must not eat the whole device session: every run is bounded.
bounded() { timeout -k 10 "${RUN_TIMEOUT:-200}" "$@"; }
steps_dqn="${STEPS_DQN:-1000}" steps_ppo="${STEPS_PPO:-2000}" steps_jax="${STEPS_JAX:-1000}" steps_overhead="${STEPS_OVERHEAD:-600}"

echo "== machine"
python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.is_available())'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls -l /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>/dev/null | head -4

echo "== 1. dqn cuda";  bounded "$rlscope" run --out "$out/dqn" -- python3 "$workloads/dqn.py" --device cuda --steps "$steps_dqn" --quiet
echo "== 2. ppo cuda";  bounded "$rlscope" run --out "$out/ppo" -- python3 "$workloads/ppo.py" --device cuda --steps "$steps_ppo" --quiet
echo "== 3. jax cuda";  bounded "$rlscope" run --out "$out/jax" -- python3 "$workloads/dqn_jax.py" --device cuda --steps "$steps_jax" --quiet
echo "== 4. overhead (training-loop wall_s)"
for workload in dqn.py ppo.py dqn_jax.py; do
  for i in 1 2; do
    bounded python3 "$workloads/$workload" --device cuda --steps "$steps_overhead" --quiet | sed "s/^/$workload plain: /"
    bounded "$rlscope" run --quiet --out "$out/ovh_${workload}_cupti_$i" -- \
      python3 "$workloads/$workload" --device cuda --steps "$steps_overhead" --quiet | sed "s/^/$workload cupti: /"
    bounded "$rlscope" run --quiet --no-cupti --out "$out/ovh_${workload}_nocupti_$i" -- \
      python3 "$workloads/$workload" --device cuda --steps "$steps_overhead" --quiet | sed "s/^/$workload nocupti: /"
  done
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
    main = max(report["processes"], key=lambda p: p["gpu"]["kernels"])
    gpu = main["gpu"]
    rows.append((f"{name} GPU capture", f"{gpu['status']}: {gpu['message'][:90]}"))
    launch_apis = [a for a in gpu["apis"] if "Launch" in a["api"]]
    launch_calls = sum(a["calls"] for a in launch_apis)
    top = sorted(launch_apis, key=lambda a: -a["calls"])[:4]
    detail = ", ".join("%s=%d calls:%d kernels" % (a["api"], a["calls"], a["kernels"]) for a in top)
    rows.append((f"{name} kernels / launch calls", f"{gpu['kernels']} / {launch_calls} ({detail})"))
    none = sum(r["count"] for r in gpu["by_launch"] if r["operation"] == "(none)" and r["category"] == "Kernel")
    rows.append((f"{name} kernels unattributed / in (none)", f"{gpu['unattributed']} / {none}"))
    rows.append((f"{name} copies / memsets / dropped / before-launch",
                 f"{gpu['memcpys']} / {gpu['memsets']} / {gpu['dropped']} / {gpu['began_before_launch']}"))
    rows.append((f"{name} GPU busy / wall", f"{gpu['busy_ns'] / 1e6:.1f} ms / {report['wall_ns'] / 1e6:.0f} ms "
                 f"({100 * gpu['busy_ns'] / max(report['wall_ns'], 1):.2f}%)"))
    smi = report.get("nvidia_smi", {}).get("gpus", [])
    if smi:
        text = " ".join("gpu%d=%.1f%%/%d%%" % (g["index"], g["mean_utilization_percent"], g["max_utilization_percent"]) for g in smi)
        rows.append((f"{name} nvidia-smi util mean/max", text))
    for op in gpu["operations"]:
        if op["operation"] in ("simulation", "inference", "backprop", "replay"):
            rows.append((f"{name} {op['operation']}", f"wall {op['wall_ns'] / 1e6:.0f} ms, GPU busy {100 * op['gpu_busy_fraction']:.2f}%, "
                         f"kernels {op['kernels']} ({op['kernel_ns'] / 1e6:.1f} ms by launch)"))
    cuda_api = sum(r["ns"] for r in report["rows"] if r["category"] == "CUDA API")
    rows.append((f"{name} CUDA API (CPU)", f"{cuda_api / 1e6:.0f} ms; CUPTI overhead {gpu['cupti_overhead_ns'] / 1e6:.1f} ms"))
walls = {}
log = open(os.path.join(out, "verify_gpu.log")).read()
for workload, mode, value in re.findall(r"^(\S+) (plain|cupti|nocupti): .*?wall_s=([0-9.]+)", log, re.M):
    walls.setdefault((workload, mode), []).append(float(value))
for workload in ("dqn.py", "ppo.py", "dqn_jax.py"):
    plain = walls.get((workload, "plain"))
    if not plain:
        continue
    parts = ["plain " + "/".join(map(str, plain))]
    for mode in ("cupti", "nocupti"):
        values = walls.get((workload, mode))
        if values:
            parts.append("%s %s = %.2fx" % (mode, "/".join(map(str, values)), min(values) / min(plain)))
    rows.append((f"overhead {workload}", ", ".join(parts)))
width = max(len(k) for k, _ in rows)
for k, v in rows:
    print(f"{k:<{width}}  {v}")
PY
