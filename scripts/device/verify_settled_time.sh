#!/usr/bin/env bash
# The settled time of each trace (rlscope_trace.fbs Batch.settled_ns) on
# the GPU machine and on code nobody here wrote: CleanRL's ppo (torch on
# CUDA, CUPTI's callbacks), dqn_jax (JAX) and the bundled dqn, under
# Python 3.12's sys.monitoring backend. Every trace file is checked with
# `rlscope dump --check-settled` (no event of a later batch may begin
# before a claim); the table gives the claims, the events checked
# against them and the events that began too early. With .device carried and
# CleanRL's sources in .device/bench_sources; ONLY="ppo dqn_jax
# bundled_dqn" (the default; dqn too) picks. Table last; logs in $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_settled_time.log
only="${ONLY:-ppo dqn_jax bundled_dqn}"
fresh_work /tmp/rlscope-settled-time
use_cleanrl
cd "$work" || exit 1

check() {  # name, then the command
  local name="$1"; shift
  [[ " $only " != *" $name "* ]] && return 0
  local dir="$work/$name" claims=0 checked=0 early=0 files=0 failed=0
  "$rlscope" run --quiet --out "$dir" -- "$@" >"$work/$name.log" 2>&1
  local status=$?
  if [[ ! -d "$dir/trace" ]]; then
    echo "  $name: rlscope run left no trace (exit $status): $(tail -3 "$work/$name.log")"
    return 0
  fi
  for trace in "$dir"/trace/*.rlt; do
    files=$((files + 1))
    line=$("$rlscope" dump --check-settled "$trace" 2>&1)
    echo "$line" >>"$out/settled_$name.txt"
    if [[ "$line" =~ ([0-9]+)\ settled\ claims,\ ([0-9]+)\ events\ checked\ against\ them,\ ([0-9]+)\ begin ]]; then
      claims=$((claims + BASH_REMATCH[1])); checked=$((checked + BASH_REMATCH[2])); early=$((early + BASH_REMATCH[3]))
    else
      failed=$((failed + 1))
    fi
  done
  printf '%-12s %6d %8d %12d %8d %8d\n' "$name" "$files" "$claims" "$checked" "$early" "$failed" >>"$work/table"
}
run_cartpole_workloads check

echo "== summary: trace files, settled claims, events checked against one, events beginning too early, unreadable"
printf '%-12s %6s %8s %12s %8s %8s\n' workload files claims checked early unread
cat "$work/table"
