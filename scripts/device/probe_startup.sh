#!/usr/bin/env bash
# Where the correction misses on the GPU machine, part by part:
#   1. start-up alone (imports, CUDA context, JAX's client), with every
#      level, without CUPTI (--no-cupti) and without the Python level
#      (RLSCOPE_PYTHON_HOOK=off): rlscope validate of each
#   2. pure-Python loops of different mixes (scripts/bench/python_mixes.py):
#      how this interpreter's speed changes under the hook beyond what the
#      per-event costs price
#   3. `python3 -X importtime -c "import torch"` unprofiled and profiled:
#      the modules whose import slows down most
# With .device carried (scripts/device/bundle.sh); CALIBRATION_IN=FILE
# reuses a calibration made on this machine kind, else one is made
# (--accept-uncertain, as verify_correction.sh). REPS pairs per validation
# (default 4); ONLY="torch_all jax_nocupti mix_arith ..." runs just those.
# Full log and validate_all.json in $OUT; a table (validate_table.py) last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_startup.log
bounded() { timeout -k 10 "${RUN_TIMEOUT:-240}" "$@"; }
reps="${REPS:-4}"
fresh_work /tmp/rlscope-startup
python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.is_available())'

calibration_into_out

validate() {  # name, then validate's options, --, the command
  local name="$1"; shift
  [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]] && return 0
  echo "== validate $name"
  bounded "$rlscope" validate -n "$reps" --calibration "$out/calibration.json" --out "$work/$name" "$@" |
    grep -E "^ +[0-9]+ +[UP]|raw overhead|^  bias|Python hook"
}
torch_start=(python3 -c "import numpy, torch; torch.zeros(1, device='cuda').add_(1).item()")
jax_start=(python3 -c "import jax, jax.numpy as jnp, flax.linen, optax; jnp.ones(3).sum().block_until_ready()")
for config in all nocupti nopython; do
  options=()
  [[ "$config" == nocupti ]] && options=(--no-cupti)
  hook=on
  [[ "$config" == nopython ]] && hook=off
  RLSCOPE_PYTHON_HOOK=$hook validate "torch_$config" "${options[@]}" -- "${torch_start[@]}"
  python3 -c 'import jax, flax, optax' 2>/dev/null &&
    RLSCOPE_PYTHON_HOOK=$hook validate "jax_$config" "${options[@]}" -- "${jax_start[@]}"
done
for mix in arith calls methods strings mixed; do
  validate "mix_$mix" -- python3 "$root/scripts/bench/python_mixes.py" "$mix"
done

if [[ -z "${ONLY:-}" || " $ONLY " == *" importtime "* ]]; then
  echo "== import torch, -X importtime"
  for i in 1 2 3; do
    python3 -X importtime -c "import torch" 2>"$work/importtime_unprofiled_$i.txt"
    "$rlscope" run --quiet --out "$work/importtime_run_$i" -- python3 -X importtime -c "import torch" \
      2>"$work/importtime_profiled_$i.txt" >/dev/null
  done
  python3 - "$work" <<'PY'
import glob, os, statistics, sys
work = sys.argv[1]
def load(kind):
    runs = []
    for path in sorted(glob.glob(os.path.join(work, f"importtime_{kind}_*.txt"))):
        runs.append({})
        for line in open(path):
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = line[len("import time:"):].split("|")
            runs[-1][name.strip()] = int(self_us)
    return runs
unprofiled, profiled = load("unprofiled"), load("profiled")
names = set().union(*unprofiled, *profiled)
median = lambda runs, n: statistics.median(r.get(n, 0) for r in runs)
total_u = sum(median(unprofiled, n) for n in names)
total_p = sum(median(profiled, n) for n in names)
print(f"import torch, self time summed over {len(names)} modules: unprofiled {total_u / 1e3:.0f} ms, profiled {total_p / 1e3:.0f} ms")
for name in sorted(names, key=lambda n: median(unprofiled, n) - median(profiled, n))[:15]:
    print(f"  {name:<45} {median(unprofiled, name) / 1e3:8.1f} -> {median(profiled, name) / 1e3:8.1f} ms")
PY
fi

echo "== summary"
python3 "$root/scripts/device/validate_table.py" "$work" "$out"
