#!/usr/bin/env bash
# The preload's hook installation at start-up: the time rlscope spends
# scanning loaded libraries for calls to hook (simulators, the backend's C++
# API, communication libraries), timed in-band as the "simulator hook
# installation" profiler-overhead events, summed per run. The program is
# `import torch` (Debian's torch: libtorch and gloo, hundreds of libraries).
#
#   scripts/bench/hook_install.sh [RUNS] RLSCOPE [RLSCOPE...]
#
# Several rlscope binaries (builds of two commits) are run interleaved,
# RUNS (default 5) times each; prints one line per run and the median per
# binary. Needs /usr/bin/python3 with torch.
set -euo pipefail
runs=5
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  runs=$1
  shift
fi
if (($# == 0)); then
  echo "usage: $0 [RUNS] RLSCOPE [RLSCOPE...]" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# install_ms RLSCOPE: one run's summed hook installation, in ms.
install_ms() {
  local rlscope=$1 out="$work/run"
  rm -rf "$out"
  "$rlscope" run --quiet --no-cupti --out "$out" -- /usr/bin/python3 -c "import torch" > /dev/null 2>&1
  local trace
  trace=$(ls "$out"/trace/*.rlt | head -1)
  "$rlscope" dump "$trace" | awk '
    /string [0-9]+ = simulator hook installation$/ { id = $2 }
    /profiler_overhead/ {
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^dur=/) { d = substr($i, 5) }
        if ($i == "name=" id) { total += d }
      }
    }
    END { printf "%.1f\n", total / 1e6 }'
}

for ((r = 1; r <= runs; r++)); do
  for i in $(seq 1 $#); do
    ms=$(install_ms "${!i}")
    echo "run $r binary $i: ${ms} ms"
    echo "$ms" >> "$work/times.$i"
  done
done
for i in $(seq 1 $#); do
  echo "binary $i (${!i}): median $(sort -n "$work/times.$i" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}') ms of $runs runs"
done
