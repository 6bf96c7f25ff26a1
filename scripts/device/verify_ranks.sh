#!/usr/bin/env bash
# Device check of a many-rank job on the GPU machine's host (16 cores), with
# .device carried (scripts/device/bundle.sh): scripts/bench/ranks.sh, a
# RANKS-rank data-parallel job over gloo on the CPU (default 16 ranks,
# STEPS 30 steps, PAIRS 3 interleaved pairs), under the machine's python3.
# NCCL on several GPUs is not here: it needs a machine with several GPUs.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_ranks.log
echo "== machine"
python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'
echo "== ${RANKS:-16} ranks"
RLSCOPE="$rlscope" PYTHON=python3 timeout -k 10 500 bash "$root/scripts/bench/ranks.sh" "${RANKS:-16}" "${STEPS:-30}" "${PAIRS:-3}"
echo "ranks.sh exit $?"
