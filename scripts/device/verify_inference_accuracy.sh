#!/usr/bin/env bash
# Device run of the inference-accuracy benchmark (scripts/bench/
# inference_accuracy.py) on the GPU machine (Python 3.12, torch 2.11), with
# .device carried (scripts/device/bundle.sh) and the pinned third-party
# sources copied into .device/bench_sources beforehand:
#   python3 scripts/bench/inference_accuracy.py prepare-sources --into .device/bench_sources ...
# ONLY="name ..." runs just those programs (spec names); EXPLAIN=1 prints,
# after each, where inference disagrees with the annotation (--explain). CleanRL's scripts use the GPU (their default --cuda); our own programs and
# the SB3 drivers run on the CPU. Full output in $OUT; the table is printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_inference_accuracy.log

python="$(command -v python3)"
echo "== machine"; "$python" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.is_available())'
for module in gymnasium cloudpickle pandas matplotlib jax flax optax; do
  "$python" -c "import $module" 2>/dev/null && echo "has $module" || echo "no $module"
done
sources=()
if [[ -d "$bundle/bench_sources" ]]; then sources=(--sources "$bundle/bench_sources"); fi
"$python" "$root/scripts/bench/inference_accuracy.py" run --rlscope "$rlscope" --python "$python" "${sources[@]}" \
  ${ONLY:+--only $ONLY} ${EXPLAIN:+--explain} --keep "$out/runs" --markdown
