#!/usr/bin/env bash
# The reliability checks of scripts/test.sh (README, "Reliability checks in
# CI"), each in a clang tree of its own next to the normal build:
#   build-asan  ASan + UBSan (+ libFuzzer coverage): the CLI, the analysis
#               and the unit tests, then ctest there less the timing tests,
#               and the fuzz targets for a bounded time (ctest label fuzz).
#   build-tsan  TSan: the preload's buffer and flusher unit tests.
# The injected library stays uninstrumented in build-asan (top-level
# CMakeLists.txt says why). RLSCOPE_RELIABILITY=asan|tsan runs one part;
# RLSCOPE_FUZZ_SECONDS sets the trace fuzzer's time (60).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_prefix="${RLSCOPE_RELIABILITY_BUILD_PREFIX:-$root/build}"
parts="${RLSCOPE_RELIABILITY:-asan tsan}"
jobs="$(nproc)"

# -O1: what the sanitizers recommend, and the quickest build that keeps
# their reports readable; asserts stay on. clang's integrated assembler
# lacks the .cfi_val_offset the trampolines use: GNU as assembles.
configure() {
  local dir="$1"; shift
  CC=clang CXX=clang++ cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
    -DCMAKE_ASM_FLAGS=-fno-integrated-as "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
}

# A finding fails the test that made it: halt at the first report, with a
# stack. Leaks are checked (LeakSanitizer) in the instrumented processes
# only: python3 and the other programs profiled by the e2e tests are not
# instrumented, so their leaks never show. Suppressions: test/sanitizers/.
# disable_coredump=0: ASan would otherwise lower RLIMIT_CORE, which the
# programs rlscope profiles inherit (e2e.fault_program checks core dumps).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:disable_coredump=0:strict_string_checks=1:suppressions=$root/test/sanitizers/asan.supp"
export LSAN_OPTIONS="suppressions=$root/test/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$root/test/sanitizers/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/test/sanitizers/tsan.supp"

# Tests left out under ASan: those that compare timings (RUN_SERIAL:
# sanitizer slowdown is not overhead rlscope should correct), those that
# spend their time in torch (uninstrumented python3, minutes for nothing
# the unit and CLI tests do not already cover; e2e.readme also builds the
# demo's own uninstrumented tree), and preload.exports, which checks the
# symbol table of the gcc-built preload (clang's differs).
asan_excluded='^(e2e\.(fake_cuda|gpu|correction|flood|workloads|readme)|preload\.exports|bench\..*)$'

for part in $parts; do
  start=$(date +%s)
  case "$part" in
    asan)
      dir="$build_prefix-asan"
      configure "$dir" -DRLSCOPE_SANITIZE=address,undefined -DRLSCOPE_FUZZ=ON -DRLSCOPE_WITH_NATIVE_WORKLOAD=OFF \
        -DRLSCOPE_FUZZ_SECONDS="${RLSCOPE_FUZZ_SECONDS:-60}"
      cmake --build "$dir" --parallel "$jobs"
      (cd "$dir" && ctest --output-on-failure --parallel "$jobs" --timeout 900 -LE fuzz -E "$asan_excluded")
      (cd "$dir" && ctest --output-on-failure --parallel "$jobs" -L fuzz)
      ;;
    tsan)
      dir="$build_prefix-tsan"
      configure "$dir" -DRLSCOPE_SANITIZE=thread -DRLSCOPE_SANITIZE_PRELOAD=ON
      cmake --build "$dir" --parallel "$jobs" --target preload_tests
      (cd "$dir" && ctest --output-on-failure --parallel "$jobs" --timeout 600 -R '^preload_tests\.')
      ;;
    *) echo "RLSCOPE_RELIABILITY: unknown part '$part' (asan, tsan)" >&2; exit 2 ;;
  esac
  echo "rlscope reliability: $part took $(( $(date +%s) - start )) s"
done
