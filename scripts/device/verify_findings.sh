#!/usr/bin/env bash
# Device run of RL-Scope's findings (scripts/bench/paper_findings.py) on the
# GPU machine (Python 3.12, torch 2.11, jax 0.11), with .device carried
# (scripts/device/bundle.sh) and the pinned third-party sources copied into
# .device/bench_sources beforehand (inference_accuracy.py prepare-sources).
# Calibrates first, so the reports are corrected; the networks run on the
# GPU. Full log, the calibration, findings.json and the run directories'
# reports in $OUT; the tables are printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_findings.log
[[ -d /usr/local/cuda/lib64 ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"
python="$(command -v python3)"

echo "== machine"
"$python" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.is_available())'
"$python" -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1 | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== calibrate"
# Kept on a warm machine: CALIBRATE=0 reuses the one made by an earlier call.
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/rlscope-cache}"
if [[ "${CALIBRATE:-1}" != 0 ]] || ! "$rlscope" calibrate --check >/dev/null; then
  # --accept-uncertain: as in verify_correction.sh (the host is shared).
  timeout -k 10 "${CALIBRATE_TIMEOUT:-300}" "$rlscope" calibrate --repetitions "${CAL_REPS:-3}" --python "$python" \
    $([[ "${ACCEPT_UNCERTAIN:-1}" != 0 ]] && echo --accept-uncertain)
fi
cp "$XDG_CACHE_HOME"/rlscope/calibration-*.json "$out/" 2>/dev/null

echo "== findings"
work=/tmp/rlscope-findings
rm -rf "$work"
sources=()
[[ -d "$bundle/bench_sources" ]] && sources=(--sources "$bundle/bench_sources")
"$python" "$root/scripts/bench/paper_findings.py" run --rlscope "$rlscope" --python "$python" --device cuda \
  --repeat "${REPEAT:-2}" --scale "${SCALE:-0.4}" "${sources[@]}" \
  ${ONLY:+--only $ONLY} --keep "$work" --json "$out/findings.json" > "$out/findings.md"
status=$?
# The first repetition's text reports, for a second look here (findings.json
# has every run's figures).
for dir in "$work"/*.0/run; do
  cp "$dir/report.txt" "$out/$(basename "$(dirname "$dir")").report.txt" 2>/dev/null
done
cat "$out/findings.md"
exit $status
