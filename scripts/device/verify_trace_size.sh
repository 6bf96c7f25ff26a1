#!/usr/bin/env bash
# Device check of trace size and compression speed on the GPU machine's
# host CPU, with .device carried (scripts/device/bundle.sh):
# scripts/bench/trace_size.sh (the PPO and DQN workloads under the
# machine's python3, each run plain and compressed, then bench_trace_size's
# levels and block layouts on the plain trace, MB/s on one core). The fake
# CUDA flood is not bundled, so it is left out.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_trace_size.log
echo "== machine"
python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())'
# trace_size.sh reads a build tree: one made of links into the bundle
# (rlscope finds its preload next to its own, resolved, path).
tree="$(mktemp -d)"
mkdir -p "$tree/bin"
ln -s "$rlscope" "$tree/bin/rlscope"
ln -s "$bundle/test/bench_trace_size" "$tree/bin/bench_trace_size"
echo "== trace_size.sh"
RLSCOPE_BUILD_DIR="$tree" PYTHON=python3 timeout -k 10 500 bash "$root/scripts/bench/trace_size.sh"
echo "trace_size.sh exit $?"
rm -rf "$tree"
