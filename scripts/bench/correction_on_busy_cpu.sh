#!/usr/bin/env bash
# The correction's bias on a busy CPU: `rlscope validate` of the fake CUDA
# client (hooked calls, CUPTI callbacks that spin 5 us each), for one or
# two builds in turn, ROUNDS rounds, optionally beside HOGS busy loops of
# its own (the machine may be busy anyway: say what else ran). Each round
# prints raw overhead, the bias of the corrected wall time and what the
# threads' waits for a CPU added to the estimate (report.json's
# correction.cpu_wait_ns; absent before it existed).
#
#   scripts/bench/correction_on_busy_cpu.sh BUILD [OLD_RLSCOPE]
#   env: ROUNDS (2), STEPS (600), REPS (4), HOGS (0), CALIBRATION (made
#   once with BUILD's rlscope, quick, if unset)
set -euo pipefail
build="$(cd "${1:?usage: correction_on_busy_cpu.sh BUILD [OLD_RLSCOPE]}" && pwd)"
old="${2:-}"
rounds="${ROUNDS:-2}" steps="${STEPS:-600}" reps="${REPS:-4}" hogs="${HOGS:-0}"
work="$(mktemp -d /tmp/rlscope-busy-cpu.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
export RLSCOPE_FAKE_CUPTI_CALLBACK_NS=5000 RLSCOPE_FAKE_CUDART_SCALE=1
cupti="$build/test/fake_cuda/cupti/libcupti.so.13"
client="$build/test/fake_cuda/nvtx_client"
calibration="${CALIBRATION:-$work/calibration.json}"
if [[ ! -f "$calibration" ]]; then
  "$build/bin/rlscope" calibrate --quick --repetitions 5 --accept-uncertain --calibration "$calibration" \
    --python /usr/bin/python3 > "$work/calibrate.log" 2>&1
fi
for ((i = 0; i < hogs; i++)); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "date: $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $hogs hogs of our own"
for ((round = 1; round <= rounds; round++)); do
  for which in ${old:+old} new; do
    rlscope="$build/bin/rlscope"
    [[ "$which" == old ]] && rlscope="$old"
    out="$work/$which$round"
    "$rlscope" validate -n "$reps" --calibration "$calibration" --cupti "$cupti" --out "$out" -- "$client" \
      --steps "$steps" > "$out.log" 2>&1
    python3 - "$out" "$which" <<'PY'
import glob, json, sys
out, which = sys.argv[1], sys.argv[2]
s = json.load(open(out + "/validate.json"))["summary"]
waits = [json.load(open(f))["correction"].get("cpu_wait_ns", 0) / json.load(open(f))["correction"]["estimated_ns"]
         for f in glob.glob(out + "/profiled-*/report.json")]
print(f"{which}: raw {s['raw_overhead']['mean']:.3f}x  bias {100 * s['bias_of_means']:+.1f} %  "
      f"uncorrected {100 * s['uncorrected_bias_of_means']:+.1f} %  "
      f"waits' share of the estimate {100 * sum(waits) / max(len(waits), 1):.0f} %")
PY
  done
done
