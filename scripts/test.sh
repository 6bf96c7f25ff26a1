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
# Then the reliability checks (sanitizers, fuzzing: 5.5 min on 2
# cores); RLSCOPE_RELIABILITY=none skips them, =asan or =tsan runs one.
if [[ "${RLSCOPE_RELIABILITY:-}" != none ]]; then
  RLSCOPE_RELIABILITY_BUILD_PREFIX="$build_dir" bash "$root/scripts/test_reliability.sh"
fi
