#!/usr/bin/env bash
# Installs what is missing, builds, profiles the bundled default workload and
# prints the report.
#
# The default workload is, for now, a C++ program that marks its operations
# with NVTX ranges and calls the CUDA runtime, run against the fake CUDA
# runtime built with the tests (so it needs no GPU). The bundled RL workloads
# (PyTorch/MuJoCo) replace it once they exist.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RLSCOPE_BUILD_DIR:-$root/build}"
bash "$root/scripts/install_deps.sh"
bash "$root/scripts/build.sh"
client="$build_dir/test/fake_cuda/nvtx_client"
if [[ ! -x "$client" ]]; then
  echo "demo: $client was not built: it needs a CUDA toolkit (see the CMake warning above)" >&2
  exit 1
fi
out="$root/rlscope-out/demo-$(date +%Y%m%d-%H%M%S)"
"$build_dir/bin/rlscope" run --out "$out" -- "$client" --steps 2000 --threads 2
