#!/usr/bin/env bash
# Installs, through apt, every Debian package rlscope needs to build and test.
# Only packages that are missing are installed, so a second run is a no-op.
# The CUDA toolkit is not a Debian package: when /usr/local/cuda is absent the
# build still works and the CUDA-specific parts are skipped (CMake says so).
# With arguments, installs those packages instead (other scripts' extra
# needs, e.g. the inference-accuracy corpus's third-party dependencies);
# `--demo` installs only what scripts/demo.sh needs (the CLI, the preload
# and the bundled Python workloads; no test, lint or fuzz tools).
set -euo pipefail

demo_packages=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev libflatbuffers-dev flatbuffers-compiler
  libunwind-dev nlohmann-json3-dev libsqlite3-dev libzstd-dev
  python3 python3-numpy python3-torch libopenblas0-pthread libmujoco-dev
)

packages=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev libflatbuffers-dev flatbuffers-compiler
  catch2 libunwind-dev nlohmann-json3-dev libsqlite3-dev libzstd-dev
  python3
  # Bundled RL workloads (scripts/workloads/): PyTorch (CPU) under
  # /usr/bin/python3, MuJoCo's C library driven through ctypes, and a
  # threaded BLAS (without it torch falls back to a reference BLAS, ~8x
  # slower on a 256-wide MLP). libtorch-dev: the native C++ workload.
  python3-numpy python3-torch libopenblas0-pthread libmujoco-dev libtorch-dev
  # Python hook tests: greenlet switches stacks under the profile hook
  # (gevent, eventlet and others are built on it).
  python3-greenlet
  # rlscope.load's tests: its DataFrame path (the lists path hides pandas).
  python3-pandas
  # Report formats' tests: report.html is rendered in headless Chromium, and
  # the Perfetto export is decoded by protoc against Perfetto's trace schema.
  chromium protobuf-compiler
  # Reliability suite: libFuzzer and the sanitizers come with clang.
  clang libclang-rt-dev
  # The formatting check (.clang-format, ctest -R format) and clang-tidy
  # (.clang-tidy).
  clang-format clang-tidy
)

what="build dependencies"
if [[ "${1:-}" == --demo ]]; then
  packages=("${demo_packages[@]}")
  what="the demo's dependencies"
elif (($# > 0)); then
  packages=("$@")
  what="of $*"
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "rlscope: all $what are installed"
  exit 0
fi

echo "rlscope: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "rlscope: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
