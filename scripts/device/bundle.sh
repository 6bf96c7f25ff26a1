#!/usr/bin/env bash
# Packs what a device (GPU machine) run needs into ./.device/ (git-ignored),
# for the device tool's `carry`: the built rlscope, its preload, the test
# client, and the shared libraries the GPU machine lacks (Abseil: it has no
# package registry). Run here, after scripts/build.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
bundle="$root/.device"
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/deps" "$bundle/test" "$bundle/mujoco"
cp "$build/bin/rlscope" "$bundle/bin/"
cp "$build/lib/librlscope_preload.so" "$bundle/lib/"
cp -r "$build/share" "$bundle/"
# rlscope calibrate's micro-workloads, laid out as in the build tree.
for tool in rlscope-calibrate-native rlscope-calibrate-cuda; do
  if [[ -x "$build/bin/$tool" ]]; then cp "$build/bin/$tool" "$bundle/bin/"; fi
done
cp "$build/lib/librlscope_calibrate_sim.so" "$bundle/lib/"
# RLSCOPE_STEPS_BUILD=DIR: a build configured with -DRLSCOPE_HOOK_STEPS=ON,
# whose preload probe_hook_breakdown.sh uses for the hook's steps.
if [[ -n "${RLSCOPE_STEPS_BUILD:-}" ]]; then
  mkdir -p "$bundle/lib/steps"
  cp "$RLSCOPE_STEPS_BUILD/lib/librlscope_preload.so" "$bundle/lib/steps/"
fi
if [[ -d "$build/lib/rlscope" ]]; then cp -r "$build/lib/rlscope" "$bundle/lib/"; fi
# libunwind, which the preload loads at its first native stack sample (the
# GPU machine has none: without it, one warning and no native sampling).
cp -L /usr/lib/x86_64-linux-gnu/libunwind.so.8 "$bundle/deps/" 2>/dev/null || true
# Debian's MuJoCo and the libraries it needs (the GPU machine has none);
# the workloads find it through RLSCOPE_MUJOCO_LIB.
mujoco=/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2
if [[ -e "$mujoco" ]]; then
  cp -L "$mujoco" "$bundle/mujoco/"
  ldd "$mujoco" | awk '/=> \// {print $3}' | { grep -E 'libccd|lodepng|qhull|tinyxml' || true; } | while read -r lib; do
    cp -L "$lib" "$bundle/mujoco/"
  done
fi
cp "$build/test/fake_cuda/nvtx_client" "$bundle/test/"
[[ -x "$build/bin/bench_cuda_call" ]] && cp "$build/bin/bench_cuda_call" "$bundle/test/"
if [[ -x "$build/bin/bench_timers" ]]; then cp "$build/bin/bench_timers" "$bundle/test/"; fi
if [[ -x "$build/bin/bench_trace_size" ]]; then cp "$build/bin/bench_trace_size" "$bundle/test/"; fi
# The event flood (scripts/bench/flood.sh; its header says how to run it there).
if [[ -x "$build/test/bin/flood" ]]; then cp "$build/test/bin/flood" "$bundle/test/"; fi
# Libraries of ours that a stock Ubuntu 24.04 does not have.
for binary in "$bundle/bin/rlscope" "$bundle/lib/librlscope_preload.so"; do
  ldd "$binary" | awk '/=> \// {print $3}' | { grep -E 'libabsl|libflatbuffers|libunwind' || true; } | while read -r lib; do
    cp -L "$lib" "$bundle/deps/"
  done
done
du -sh "$bundle"
