#!/usr/bin/env bash
# Runs the fake-CUDA correction test (test/e2e/correction_e2e_test.py) on the
# device machine's CPU: it is another CPU than the build machine's (an Intel
# Xeon, with slower clocks), and the test's accuracy checks must hold on
# both. The fake runtime and CUPTI come from the bundle, not NVIDIA's.
#   device: bash scripts/device/verify_fake_correction.sh [ROUNDS]
# Logs go to $OUT; the last lines are a short table.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$root/.device"
out="${OUT:-/tmp}"
rounds="${1:-2}"
fake="$bundle/lib/rlscope/fake_cuda"
export LD_LIBRARY_PATH="$fake:$bundle/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
grep -m1 "model name" /proc/cpuinfo | tee "$out/cpu.txt"
results=()
for round in $(seq "$rounds"); do
  log="$out/correction-$round.log"
  python3 "$root/test/e2e/correction_e2e_test.py" --rlscope "$bundle/bin/rlscope" \
    --client "$bundle/test/nvtx_client" --cupti "$fake/cupti/libcupti.so.13" > "$log" 2>&1
  results+=("round $round: exit $? ($(grep -cE '\.\.\. ok$' "$log") ok, $(grep -cE '\.\.\. (FAIL|ERROR)$' "$log") failed)")
done
python3 "$root/scripts/device/fake_correction_ratios.py" "$bundle/bin/rlscope" "$bundle/test/nvtx_client" \
  "$fake/cupti/libcupti.so.13" 3 > "$out/ratios.log" 2>&1
cat "$out/ratios.log"
grep -h "corrected CUDA time missed\|AssertionError\|calibration attempt" "$out"/correction-*.log | cut -c1-600
printf '%s\n' "${results[@]}"
