#!/usr/bin/env bash
# Event flood benchmark: 8 threads calling a hooked CUDA entry
# point of the fake runtime as fast as they can for 10 s under `rlscope
# run`, plus a bare run for the memory baseline. Prints the rate reached,
# delivered and dropped events, the longest single call (the longest a
# program thread was held up) and the memory figures; it is the ctest case
# e2e.flood (test/e2e/flood_e2e_test.py) at full length, so every figure is
# also checked (delivered + dropped == calls, per thread). Record the output,
# with date and machine, in scripts/bench/RESULTS.md.
#   flood.sh [SECONDS [THREADS]]          (default 10 s, 8 threads)
# Paths: RLSCOPE_BUILD_DIR (default ./build), or RLSCOPE and FLOOD for
# the two binaries. On the GPU machine (device tool, .device carried;
# scripts/device/bundle.sh packs the flood too) run
#   LD_LIBRARY_PATH=.device/deps:.device/lib/rlscope/fake_cuda \
#     RLSCOPE=.device/bin/rlscope FLOOD=.device/test/flood scripts/bench/flood.sh
# (the report stage of each 10 s profiled run needs up to ~3.5 GB of memory,
# 7.5 GB where this machine has a calibration;
# scripts/bench/report_memory.sh measures it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RLSCOPE_BUILD_DIR:-$root/build}"
rlscope="${RLSCOPE:-$build/bin/rlscope}"
flood="${FLOOD:-$build/test/bin/flood}"
seconds="${1:-10}"
threads="${2:-8}"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "flood: $threads threads x $seconds s"
# The flood with the collector running, then with it stalled 1 s of every
# 1.5 s, then the memory comparison (bare run first). Each profiled run of
# 10 s delivers up to 100 M events: the report stage then needs ~3.5 GB
# (7.5 GB corrected).
python3 "$root/test/e2e/flood_e2e_test.py" --rlscope "$rlscope" --flood "$flood" \
  --seconds "$seconds" --threads "$threads" \
  Accounting.test_every_call_is_delivered_or_counted_as_dropped \
  Accounting.test_a_stalled_collector_costs_events_counted_as_dropped_not_program_time \
  Memory 2>&1 | grep -E '^(flood|extra memory|Ran|OK|FAIL|AssertionError)'
