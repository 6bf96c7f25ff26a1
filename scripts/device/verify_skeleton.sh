#!/usr/bin/env bash
# Device check of the skeleton (run on the GPU machine by the device tool, with
# .device carried; see scripts/device/bundle.sh):
#   1. torch's CUDA runtime calls and NVTX ranges are captured (real libcudart)
#   2. raw overhead of rlscope run on that loop, interleaved runs
#   3. the NVTX client against the real libcudart.so.13
#   4. a JAX program runs unharmed under rlscope (JAX needs CUPTI: the GPU level)
# Full logs go to $OUT; a short table is printed last.
#   verify_skeleton.sh [--quick]    (--quick: only checks 1 and 3)
set -uo pipefail
quick=0; [[ "${1:-}" == "--quick" ]] && quick=1
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_skeleton.log
py=python3

echo "== machine"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$py -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
cudart=$($py -c 'import glob, os, nvidia; print(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "**", "libcudart.so.13*"), recursive=True))[0])' 2>/dev/null)
echo "libcudart: ${cudart:-not found}"

echo "== 1. torch MLP under rlscope"
"$rlscope" run --out "$out/torch_mlp" -- $py "$root/scripts/device/torch_nvtx_mlp.py" --steps 300
cp "$out/torch_mlp/report.json" "$out/torch_mlp_report.json" 2>/dev/null

echo "== 2. overhead, 3 interleaved pairs of 1000 steps"
((quick)) || for i in 1 2 3; do
  $py "$root/scripts/device/torch_nvtx_mlp.py" --steps 1000 | tee -a "$out/plain.txt"
  "$rlscope" run --quiet --out "$out/overhead_$i" -- $py "$root/scripts/device/torch_nvtx_mlp.py" --steps 1000 | tee -a "$out/profiled.txt"
done

echo "== 3. NVTX client against the real libcudart"
if [[ -n "$cudart" ]]; then
  LD_LIBRARY_PATH="$(dirname "$cudart"):$LD_LIBRARY_PATH" "$rlscope" run --out "$out/client" -- "$bundle/test/nvtx_client" --steps 200
fi

echo "== 4. JAX under rlscope"
if ((!quick)); then
  "$rlscope" run --out "$out/jax" -- $py -c 'import jax, jax.numpy as jnp; f = jax.jit(lambda x: (x @ x).sum()); print("jax", jax.__version__, jax.devices()[0].platform, float(f(jnp.ones((256, 256)))))'
  echo "jax exit: $?"
fi

echo "== summary"
$py - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(out, name, "report.json")))
    except Exception as error:
        return {"error": str(error)}
rows = []
mlp = load("torch_mlp")
if "rows" in mlp:
    cuda = {}
    for r in mlp["rows"]:
        if r["category"] == "CUDA API":
            cuda[r["operation"]] = cuda.get(r["operation"], 0) + r["ns"]
    calls = sum(t["cuda_api_calls"] for p in mlp["processes"] for t in p["threads"])
    rows.append(("torch MLP: CUDA API calls captured", str(calls)))
    for op in ("inference", "backprop", "simulation", "(none)"):
        rows.append((f"torch MLP: CUDA API ms in {op}", f"{cuda.get(op, 0) / 1e6:.1f}"))
def times(name):
    path = os.path.join(out, name)
    return [float(m) for m in re.findall(r"in ([0-9.]+) s", open(path).read())] if os.path.exists(path) else []
plain, prof = times("plain.txt"), times("profiled.txt")
if plain and prof:
    rows.append(("overhead: plain s (3 runs)", " ".join(f"{t:.3f}" for t in plain)))
    rows.append(("overhead: profiled s (3 runs)", " ".join(f"{t:.3f}" for t in prof)))
    rows.append(("overhead: median ratio", f"{sorted(prof)[1] / sorted(plain)[1]:.3f}x"))
client = load("client")
if "rows" in client:
    rows.append(("nvtx_client on real cudart: ops", " ".join(sorted({r['operation'] for r in client['rows']}))))
jax = load("jax")
rows.append(("jax under rlscope: processes", str(len(jax.get("processes", [])))))
width = max(len(k) for k, _ in rows)
for key, value in rows:
    print(f"{key:<{width}}  {value}")
PY
