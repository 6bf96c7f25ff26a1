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
# calibration_into_out: $out/calibration.json for the check's reports:
# CALIBRATION_IN's (a calibration made by an earlier call on this machine
# kind, carried in .device: the device is handed back between calls), else
# a fresh one, stored even where some costs stay uncertain (the host is
# shared: ACCEPT_UNCERTAIN=0 refuses those).
calibration_into_out() {
  if [[ -n "${CALIBRATION_IN:-}" ]]; then
    cp "$CALIBRATION_IN" "$out/calibration.json" && echo "reused $CALIBRATION_IN"
  else
    timeout -k 10 "${CALIBRATE_TIMEOUT:-300}" "$rlscope" calibrate --calibration "$out/calibration.json" \
      $([[ "${ACCEPT_UNCERTAIN:-1}" != 0 ]] && echo --accept-uncertain)
  fi
}
# fresh_work DIR: an empty scratch folder for the check, and CUDA's
# libraries on the loader's path where the machine has them.
fresh_work() {
  work="$1"
  rm -rf "$work" && mkdir -p "$work"
  if [[ -d /usr/local/cuda/lib64 ]]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"; fi
}
# use_cleanrl: CleanRL and Gymnasium from .device/bench_sources (fetched,
# never committed) and our stand-ins for their small dependencies on
# PYTHONPATH; sets standins, scripts (CleanRL's script folder) and cleanrl
# (the command prefix that runs a script with the stand-ins).
use_cleanrl() {
  local sources="$bundle/bench_sources"
  standins="$root/scripts/bench/inference_corpus/standins"
  export PYTHONPATH="$sources/cleanrl:$sources/gymnasium-0.29.1:$standins${PYTHONPATH:+:$PYTHONPATH}"
  scripts="$sources/cleanrl/cleanrl"
  cleanrl=(python3 "$standins/run_with_standins.py")
}
# run_cartpole_workloads FN: calls `FN NAME COMMAND...` for CleanRL's ppo,
# dqn and dqn_jax on CartPole and for the bundled dqn (after use_cleanrl);
# STEPS_PPO, STEPS_DQN, PYTHON and BUNDLED_DEVICE change them. FN picks
# which to run (ONLY).
run_cartpole_workloads() {
  local check="$1"
  "$check" ppo "${cleanrl[@]}" "$scripts/ppo.py" --env-id CartPole-v1 --total-timesteps "${STEPS_PPO:-4096}" --cuda
  "$check" dqn "${cleanrl[@]}" "$scripts/dqn.py" --env-id CartPole-v1 --total-timesteps "${STEPS_DQN:-3000}" \
    --learning-starts 1000 --cuda
  "$check" dqn_jax "${cleanrl[@]}" "$scripts/dqn_jax.py" --env-id CartPole-v1 --total-timesteps "${STEPS_DQN:-3000}" \
    --learning-starts 1000
  "$check" bundled_dqn "${PYTHON:-python3}" "$workloads/dqn.py" --device "${BUNDLED_DEVICE:-cuda}" --steps 1000 --quiet
}
