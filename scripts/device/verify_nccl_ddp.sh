#!/usr/bin/env bash
# Device check of a data-parallel learner over NCCL (scripts/device/
# ddp_learner.py, started by torch.distributed.run, one process per GPU)
# under rlscope, with .device carried (scripts/device/bundle.sh). WORLD
# ranks (default: 2 where the machine has two GPUs, else 1: an NCCL world of
# one still runs NCCL's kernels for every all-reduce), STEPS steps (400).
#
#   1. an unprofiled run (the ranks' checksums), then the profiled run: per
#      rank its Communication on the CPU, its GPU time by category (NCCL
#      kernels a device runs alone are Communication), its NCCL kernels,
#      and nvidia-smi per GPU;
#   2. with two ranks or more, the straggler view with the last rank's
#      environment step slowed by SLOW_MS (5) ms;
#   3. `rlscope validate -n PAIRS` (3) of the job: raw overhead and the
#      bias of the corrected wall time.
# Logs and reports in $OUT; a short table last. NVLink multicast stays off
# (the machine requires it), in this shell and so in every child.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_nccl_ddp.log
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
fresh_work /tmp/rlscope-ddp

echo "== machine"
python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "nccl", torch.cuda.nccl.version(), torch.cuda.device_count(), "GPU(s)")'
nvidia-smi -L
gpus=$(nvidia-smi -L | grep -c '^GPU')
world="${WORLD:-$(( gpus >= 2 ? 2 : 1 ))}"
steps="${STEPS:-400}"
launch=(python3 -m torch.distributed.run --standalone --nproc_per_node="$world" "$root/scripts/device/ddp_learner.py"
        --steps "$steps")
echo "world $world, steps $steps"

echo "== calibrate"
calibration_into_out

echo "== unprofiled"
timeout -k 10 300 "${launch[@]}" 2>&1 | grep -E '^rank|Error|error' | sort

echo "== profiled"
timeout -k 10 400 "$rlscope" run --quiet --calibration "$out/calibration.json" --out "$work/ddp" -- "${launch[@]}" 2>&1 |
  grep -E '^rank|Error|error' | sort
cp "$work/ddp/report.txt" "$out/ddp.report.txt"
cp "$work/ddp/report.json" "$out/ddp.report.json"
sed -n '/^job:/,/^process /p' "$work/ddp/report.txt"

if (( world >= 2 )); then
  echo "== straggler: rank $((world - 1)) slowed by ${SLOW_MS:-5} ms a step"
  timeout -k 10 400 "$rlscope" run --quiet --calibration "$out/calibration.json" --out "$work/slow" -- "${launch[@]}" \
    --slow-rank "$((world - 1))" --slow-ms "${SLOW_MS:-5}" 2>&1 | grep -E '^rank|Error|error' | sort
  cp "$work/slow/report.txt" "$out/slow.report.txt"
  cp "$work/slow/report.json" "$out/slow.report.json"
  sed -n '/^job:/,/^process /p' "$work/slow/report.txt"
fi

echo "== validate"
timeout -k 10 "${VALIDATE_TIMEOUT:-420}" "$rlscope" validate -n "${PAIRS:-3}" --calibration "$out/calibration.json" \
  --out "$work/validate" -- "${launch[@]}" > "$out/validate.txt" 2>&1
echo "validate exit $?"
tail -25 "$out/validate.txt"

echo "== table"
python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
rows = []
for name in ("ddp", "slow"):
    path = os.path.join(out, name + ".report.json")
    if not os.path.exists(path):
        continue
    report = json.load(open(path))
    rows.append((f"{name}: corrected", f"{report['corrected']}, wall {report['wall_ns'] / 1e9:.2f} s"))
    for process in report["processes"]:
        rank = process.get("launcher_rank")
        if not rank:
            continue
        pid = process["pid"]
        cpu_comm = sum(r["ns"] for r in report["rows"] if r["process"] == pid and r["category"] == "Communication"
                       and r["resource"] != "GPU")
        gpu = {}
        for r in report["rows"]:
            if r["process"] == pid and r["resource"] == "GPU":
                gpu[r["category"]] = gpu.get(r["category"], 0) + r["ns"]
        nccl = [k for k in process["gpu"]["kernels_by_launch"] if k["kernel"].startswith("nccl")]
        rows.append((f"{name} rank {rank['rank']}/{rank['world_size']} (pid {pid})",
                     f"CPU Communication {cpu_comm / 1e6:.1f} ms; GPU " +
                     ", ".join(f"{c} {ns / 1e6:.1f} ms" for c, ns in sorted(gpu.items())) +
                     f"; NCCL kernels {sum(k['count'] for k in nccl)} ({sum(k['ns'] for k in nccl) / 1e6:.1f} ms, "
                     f"by operation {sorted({k['operation'] for k in nccl})})"))
    smi = (report.get("nvidia_smi") or {}).get("gpus", [])
    if smi:
        rows.append((f"{name}: nvidia-smi mean/max", " ".join(
            "gpu%d=%.1f%%/%d%%" % (g["index"], g["mean_utilization_percent"], g["max_utilization_percent"]) for g in smi)))
    for job in report.get("jobs", []):
        for op in job.get("operations", []):
            if op.get("slowest_rank") is not None:
                rows.append((f"{name}: job {op['operation']}", f"slowest rank {op['slowest_rank']}, "
                             f"{op.get('slowest_over_mean', 0):.2f}x the mean"))
        comm = job.get("communication") or {}
        if comm:
            rows.append((f"{name}: collectives lined up", f"{comm.get('lined_up')} ({comm.get('collectives')}), "
                         f"last to arrive per rank {comm.get('per_rank_last')}"))
validate = open(os.path.join(out, "validate.txt")).read()
for line in validate.splitlines():
    if re.search(r"overhead|bias|corrected", line, re.I) and len(line) < 160:
        rows.append(("validate", line.strip()))
width = max(len(k) for k, _ in rows) if rows else 0
for k, v in rows:
    print(f"{k:<{width}}  {v}")
PY
