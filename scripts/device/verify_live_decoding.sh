#!/usr/bin/env bash
# The trace decoded while the program runs (collector/live_decoding.h), on
# the GPU machine and on code nobody here wrote: CleanRL's ppo, dqn and
# dqn_jax under `rlscope run` (decoding during the run, the default on 16
# CPUs), each run's report set against `rlscope report` of a copy of the
# finished run (it must be the same: report.json and report.txt byte for
# byte but for the run's path), with the stream bytes decoded during the
# run (meta.json) and the seconds `rlscope run` took after the program
# ended. With .device carried and CleanRL's sources in .device/bench_sources;
# CALIBRATION_IN=FILE reuses a calibration; ONLY="ppo dqn dqn_jax
# bundled_dqn" (default the three CleanRL ones; bundled_dqn runs
# scripts/workloads/dqn.py with $PYTHON, default python3, on
# $BUNDLED_DEVICE, default cuda).
# Table last; logs in $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_live_decoding.log
only="${ONLY:-ppo dqn dqn_jax}"
fresh_work /tmp/rlscope-live-decoding
calibration_into_out
use_cleanrl
cd "$work" || exit 1

check() {  # name, then the command
  local name="$1"; shift
  [[ " $only " != *" $name "* ]] && return 0
  local dir="$work/$name" again="$work/$name-again" begin end
  begin=$(date +%s%N)
  "$rlscope" run --quiet --calibration "$out/calibration.json" --out "$dir" -- "$@" >"$work/$name.log" 2>&1
  local status=$?
  end=$(date +%s%N)
  if [[ ! -f "$dir/report.json" ]]; then
    echo "  $name: rlscope run gave no report (exit $status): $(tail -3 "$work/$name.log")"
    return 0
  fi
  mkdir -p "$again" && cp -r "$dir/trace" "$dir/rules" "$dir/meta.json" "$again/"
  [[ -f "$dir/calibration.json" ]] && cp "$dir/calibration.json" "$again/"
  "$rlscope" report --quiet "$again" >/dev/null 2>"$work/$name-again.log" ||
    echo "  $name: rlscope report failed: $(tail -3 "$work/$name-again.log")"
  python3 - "$name" "$dir" "$again" "$begin" "$end" >>"$work/table" <<'PY'
import json, os, sys
name, run, again, begin, end = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
meta = json.load(open(os.path.join(run, "meta.json")))
same = all(open(os.path.join(run, f)).read().replace(run, again) == open(os.path.join(again, f)).read()
           for f in ("report.json", "report.txt"))
after = (end - begin) / 1e9 - meta["wall_ns"] / 1e9
print(f"{name:<10} {meta['wall_ns'] / 1e9:>8.1f} {after:>12.2f} {meta.get('trace_decoded_during_run_bytes', 0) / 1e6:>12.1f} "
      f"{sum(os.path.getsize(os.path.join(run, 'trace', f)) for f in os.listdir(os.path.join(run, 'trace'))) / 1e6:>10.1f} "
      f"{'yes' if same else 'NO':>6}")
PY
}
run_cartpole_workloads check

echo "== summary: program s, s after it, MB decoded during the run, trace MB on disk, same report"
printf '%-10s %8s %12s %12s %10s %6s\n' workload program after decoded trace same
cat "$work/table"
