#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest.
# This is what CI runs (.ci/run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RLSCOPE_BUILD_DIR:-$root/build}"
bash "$root/scripts/install_deps.sh"
bash "$root/scripts/build.sh"
cd "$build_dir"
ctest --output-on-failure --parallel "$(nproc)" --timeout 900
