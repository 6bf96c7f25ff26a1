# Sourced by the verify_*.sh device checks, with the name of their log:
#   source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_x.log
# Sets root, bundle (.device, carried; scripts/device/bundle.sh), out ($OUT
# or /tmp/rlscope-device), rlscope, workloads; makes the libraries the GPU
# machine lacks (Abseil, libunwind, Debian's MuJoCo) loadable; and copies
# everything the script prints into $out/<log>.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$root/.device"
out="${OUT:-/tmp/rlscope-device}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/deps:$bundle/mujoco${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RLSCOPE_MUJOCO_LIB="$bundle/mujoco/libmujoco.so.2.2.2"
rlscope="$bundle/bin/rlscope"
workloads="$root/scripts/workloads"
exec > >(tee -a "$out/$1") 2>&1
