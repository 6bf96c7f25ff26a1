#!/usr/bin/env bash
# Configures and builds rlscope (Release) into ./build, or into $RLSCOPE_BUILD_DIR.
# Extra arguments go to the CMake configure step, e.g. -DCMAKE_BUILD_TYPE=Debug.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RLSCOPE_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
