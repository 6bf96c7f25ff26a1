#!/usr/bin/env bash
# Renders docs/images/report.png, the README's picture of report.html: profiles
# the bundled PPO workload (scripts/workloads/ppo.py, a short run) and
# screenshots the run's report.html in headless Chromium. The page opens
# offline (everything is inline), so nothing is fetched.
#
#   scripts/docs/screenshot.sh [STEPS]   (default 2000)
#
# Uses $RLSCOPE_BUILD_DIR/bin/rlscope (default build/) and this machine's
# calibration, if any (the picture then shows a corrected report).
# Needs chromium (scripts/install_deps.sh installs it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${RLSCOPE_BUILD_DIR:-$root/build}"
steps="${1:-2000}"
out_png="$root/docs/images/report.png"
# The top of the page: the answer, the main chart and the table. A taller
# window shows more, in a larger file (keep it under 400 KB).
width="${RLSCOPE_SHOT_WIDTH:-1100}"
height="${RLSCOPE_SHOT_HEIGHT:-1180}"

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null; then browser="$candidate"; break; fi
done
[[ -n "$browser" ]] || { echo "screenshot: no chromium on PATH (scripts/install_deps.sh installs it)" >&2; exit 1; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# From the source root with a relative script path, so the report names the
# workload's lines as scripts/workloads/ppo.py:LINE, not this machine's path.
cd "$root"
"$build_dir/bin/rlscope" run --quiet --out "$scratch/run" -- \
  /usr/bin/python3 scripts/workloads/ppo.py --steps "$steps" --quiet >/dev/null
mkdir -p "$(dirname "$out_png")"
# A fresh profile: a browser on a profile still in use hands the URL to it
# and exits with nothing done (as test/e2e/html_e2e_test.py notes).
"$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage \
  --user-data-dir="$scratch/profile" --hide-scrollbars \
  --window-size="$width,$height" --screenshot="$out_png" "file://$scratch/run/report.html" \
  >"$scratch/browser.log" 2>&1 || { cat "$scratch/browser.log" >&2; exit 1; }
[[ -s "$out_png" ]] || { echo "screenshot: chromium wrote no $out_png" >&2; cat "$scratch/browser.log" >&2; exit 1; }
echo "screenshot: $out_png ($(stat -c %s "$out_png") bytes)"
