#!/usr/bin/env bash
# Runs clang-tidy with .clang-tidy's checks over rlscope's C++ sources;
# fails on any finding. Needs a configured build (compile_commands.json):
#   scripts/check_tidy.sh [BUILD_DIR]        (default ./build)
# About 3 minutes on 2 cores. Not part of ctest: a lint, not a behaviour.
# The libtorch workload (scripts/workloads/native/) is left out: clang 14
# cannot parse Debian's libtorch headers (c10::IValue incomplete in
# ATen/core/List.h), whatever our code does.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "check_tidy: $build/compile_commands.json is missing: configure first (scripts/build.sh)" >&2
  exit 2
fi
tidy="$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)"
if [[ -z "$tidy" ]]; then
  echo "check_tidy: run-clang-tidy is missing (apt install clang-tidy)" >&2
  exit 2
fi
# Every .cc of ours in the build, the native workload's aside.
"$tidy" -p "$build" -quiet -j "$(nproc)" "^$root/(calibration|collector|format|preload|report|test|scripts/bench|scripts/workloads/(?!native/)).*\\.cc\$"
