#!/usr/bin/env bash
# Device check of the reports, exports and fault handling on the GPU machine, with .device
# carried (scripts/device/bundle.sh):
#   1. torch PPO and JAX DQN with --device cuda under `rlscope run`: their
#      report.html (GPU busy vs nvidia-smi on a real GPU), `rlscope diff
#      --format html` between them, and the PPO run exported to Perfetto
#      and Chrome JSON (real CUDA API, kernels and launch→kernel flows).
# (The event flood on this machine: scripts/bench/flood.sh's header.)
# The files come back in $OUT (at most 8); decode and render them on the
# build machine: protoc --decode (test/report/perfetto_trace_subset.proto),
# chromium --headless --screenshot. A short table is printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_exports.log
bounded() { timeout -k 10 "${RUN_TIMEOUT:-240}" "$@"; }
work=/tmp/rlscope-exports
rm -rf "$work" && mkdir -p "$work"

echo "== machine"
python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.is_available())'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== 1. profiled runs"
bounded "$rlscope" run --quiet --out "$work/ppo" -- python3 "$workloads/ppo.py" --device cuda --steps "${STEPS_PPO:-400}" --quiet
echo "ppo exit $?"
bounded "$rlscope" run --quiet --out "$work/jax" -- python3 "$workloads/dqn_jax.py" --device cuda --steps "${STEPS_JAX:-300}" --quiet
echo "jax exit $?"
"$rlscope" diff "$work/ppo" "$work/jax" --format html -o "$out/diff.html"; echo "diff exit $?"
"$rlscope" diff "$work/ppo" "$work/jax" | head -40
cp "$work/ppo/report.html" "$out/ppo_report.html"
cp "$work/jax/report.html" "$out/jax_report.html"
bounded "$rlscope" export "$work/ppo" --perfetto "$work/ppo.perfetto-trace" --chrome "$work/ppo_chrome.json"
echo "export exit $?"
ls -la "$work"/ppo.perfetto-trace "$work"/ppo_chrome.json
gzip -c "$work/ppo.perfetto-trace" > "$out/ppo.perfetto-trace.gz"
gzip -c "$work/ppo_chrome.json" > "$out/ppo_chrome.json.gz"
cp "$work/ppo/report.json" "$out/ppo_report.json"

echo "== summary"
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
for name in ("ppo", "jax"):
    r = json.load(open(os.path.join(work, name, "report.json")))
    smi = r.get("nvidia_smi") or {}
    print(f"{name}: wall {r.get('wall_ns', 0)/1e9:.2f} s, gpu busy {r.get('gpu_busy_ns', 0)/1e9:.3f} s, "
          f"nvidia-smi {smi}, html {os.path.getsize(os.path.join(work, name, 'report.html'))} B")
print("perfetto bytes", os.path.getsize(os.path.join(work, "ppo.perfetto-trace")))
PY
