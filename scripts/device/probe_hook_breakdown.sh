#!/usr/bin/env bash
# Where the Python hook's time goes in real GPU training scripts
# (preload/python_hook_breakdown.h): each script of ONLY (default "td3
# sac td3_jax") runs profiled once with RLSCOPE_HOOK_BREAKDOWN=1 for each
# configuration of CONFIGS (default "parts steps steps_nocupti"):
#   parts          the usual preload: the sampled callbacks' time by kind;
#   steps          a preload built with -DRLSCOPE_HOOK_STEPS=ON, carried as
#                  .device/lib/steps/librlscope_preload.so (bundle.sh with
#                  RLSCOPE_STEPS_BUILD=DIR): also a recorded native call's
#                  steps (each mark's clock read adds 10-20 ns);
#   steps_nocupti  the same without CUPTI (--no-cupti): whether the GPU
#                  level's work between callbacks is what slows them.
# With .device carried and CleanRL's sources in .device/bench_sources
# (verify_bias_side_by_side.sh's header). STEPS_OFF_POLICY (default 2000),
# DEADLINE_S (default 400): no run starts after that many seconds. The
# breakdown lines of each run are printed last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_hook_breakdown.log
fresh_work /tmp/rlscope-hook-breakdown
use_cleanrl
cd "$work" || exit 1  # CleanRL's scripts write runs/ where they start.
steps_preload="$bundle/lib/steps/librlscope_preload.so"
deadline=$((SECONDS + ${DEADLINE_S:-400}))
python3 -c 'import sys; print(sys.version.split()[0])'

script_of() {
  case "$1" in
    td3) echo "$scripts/td3_continuous_action.py --env-id Pendulum-v1 --cuda" ;;
    sac) echo "$scripts/sac_continuous_action.py --env-id Pendulum-v1 --cuda" ;;
    td3_jax) echo "$scripts/td3_continuous_action_jax.py --env-id Pendulum-v1" ;;
    dqn_jax) echo "$scripts/dqn_jax.py --env-id CartPole-v1" ;;
    *) return 1 ;;
  esac
}

for name in ${ONLY:-td3 sac td3_jax}; do
  spec=$(script_of "$name") || { echo "unknown script $name"; continue; }
  read -r -a program <<<"$spec"
  for config in ${CONFIGS:-parts steps steps_nocupti}; do
    case "$config" in parts | steps | steps_nocupti) ;; *) echo "unknown configuration $config"; continue ;; esac
    if ((SECONDS >= deadline)); then echo "(deadline reached: $name $config skipped)"; continue; fi
    extra=() preload=()
    [[ "$config" == steps* ]] && preload=(RLSCOPE_PRELOAD="$steps_preload")
    [[ "$config" == *nocupti ]] && extra=(--no-cupti)
    if [[ "$config" == steps* && ! -f "$steps_preload" ]]; then echo "no $steps_preload: $config skipped"; continue; fi
    start=$SECONDS
    env "${preload[@]}" RLSCOPE_HOOK_BREAKDOWN=1 "$rlscope" run --quiet "${extra[@]}" --out "$work/$name-$config" -- \
      "${cleanrl[@]}" "${program[@]}" --total-timesteps "${STEPS_OFF_POLICY:-2000}" --learning-starts 1000 \
      >"$work/$name-$config.out" 2>"$work/$name-$config.err"
    echo "$name $config: exit $?, $((SECONDS - start)) s"
  done
done

echo "== breakdown per run"
for f in "$work"/*.err; do
  echo "-- $(basename "$f" .err)"
  grep "python hook" "$f" | sed 's/^rlscope\[[0-9]*\]: //'
  cp "$f" "$out/" 2>/dev/null
done
