#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest.
# This is what CI runs (.ci/run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RLSCOPE_BUILD_DIR:-$root/build}"
bash "$root/scripts/install_deps.sh"
# Everything, also in a tree scripts/demo.sh configured without tests.
bash "$root/scripts/build.sh" -DBUILD_TESTING=ON -DRLSCOPE_BUILD_BENCHMARKS=ON -DRLSCOPE_WITH_NATIVE_WORKLOAD=ON
cd "$build_dir"
ctest --output-on-failure --parallel "$(nproc)" --timeout 900
# The preload built by CMake's default generator too (Unix Makefiles links
# its objects in another order): its start-up order check, and the
# simulator-hook tests run by the tree above with RLSCOPE_PRELOAD pointing
# at it (about a minute on 2 cores).
makefiles_dir="$build_dir-makefiles"
cmake -S "$root" -B "$makefiles_dir" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$makefiles_dir" --target rlscope_preload --parallel "$(nproc)" >/dev/null
makefiles_preload="$makefiles_dir/lib/librlscope_preload.so"
/usr/bin/python3 "$root/test/preload/init_order_test.py" "$makefiles_preload"
RLSCOPE_PRELOAD="$makefiles_preload" ctest --output-on-failure -R '^e2e\.sim_hooks$' --timeout 600
# Then the reliability checks (sanitizers, fuzzing: 5.5 min on 2
# cores); RLSCOPE_RELIABILITY=none skips them, =asan or =tsan runs one.
if [[ "${RLSCOPE_RELIABILITY:-}" != none ]]; then
  RLSCOPE_RELIABILITY_BUILD_PREFIX="$build_dir" bash "$root/scripts/test_reliability.sh"
fi
