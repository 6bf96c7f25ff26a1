#!/usr/bin/env bash
# Installs what is missing, builds the CLI and the preload, profiles the
# bundled default workload and prints the report: PPO (PyTorch, CPU) learning a MuJoCo cart-pole
# (scripts/workloads/ppo.py), profiled with no change to it.
#
#   scripts/demo.sh [WORKLOAD ARGS...]   (default: --steps 10000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RLSCOPE_BUILD_DIR:-$root/build}"
# Only what the demo needs: the CLI, the preload and what `rlscope
# calibrate` runs; no tests, benchmarks or native workload
# (scripts/test.sh builds those into the same tree).
bash "$root/scripts/install_deps.sh" --demo
bash "$root/scripts/build.sh" -DBUILD_TESTING=OFF -DRLSCOPE_BUILD_BENCHMARKS=OFF -DRLSCOPE_WITH_NATIVE_WORKLOAD=OFF
args=("$@")
((${#args[@]})) || args=(--steps 10000)
out="$root/rlscope-out/demo-$(date +%Y%m%d-%H%M%S)"
# Once per machine: measure rlscope's own costs so the report is corrected
# for them (about a minute; later demos reuse it). A calibration refused on
# a busy machine (or one that failed) stores nothing: the demo goes on and
# its report is uncorrected, which it says; no untrusted one is forced.
if ! "$build_dir/bin/rlscope" calibrate --check >/dev/null 2>&1; then
  echo "demo: calibrating rlscope for this machine first (once): rlscope calibrate" >&2
  if ! "$build_dir/bin/rlscope" calibrate --python /usr/bin/python3; then
    echo "demo: no calibration was stored (see above); the report below is uncorrected." \
      "Run \`rlscope calibrate\` again when the machine is quiet." >&2
  fi
fi
# Debian's torch lives in /usr/bin/python3 (another python3 may come first
# on PATH).
"$build_dir/bin/rlscope" run --out "$out" -- /usr/bin/python3 "$root/scripts/workloads/ppo.py" "${args[@]}"
