#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest:
#   1. build/       Release build (programs, firmware), all tests: unit, integration, e2e (QEMU)
#   2. build-asan/  the unit tests again under AddressSanitizer + UBSan
#   3. build-fuzz/  each libFuzzer target for a short slot ($MCULAB_FUZZ_SECONDS, default 10 s;
#                   tests/fuzz/run.sh SECONDS runs them longer by hand)
#   4. build/       every benchmark at tiny sizes (bench/run.sh --quick): fails on a crash or an
#                   error, never on a time
# Options: --no-asan (skip 2), --only-asan (skip 1, 3 and 4), --no-fuzz (skip 3), --no-bench
# (skip 4), -R REGEX (ctest filter; skips 3 and 4), -j N.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

asan=1
main=1
fuzz=1
bench=1
filter=()
jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case "$1" in
    --no-asan) asan=0 ;;
    --only-asan) main=0; fuzz=0; bench=0 ;;
    --no-fuzz) fuzz=0 ;;
    --no-bench) bench=0 ;;
    -R) filter=(-R "$2"); shift ;;
    -j) jobs="$2"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "tests/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n==== %s (%s)\n' "$*" "$(date +%H:%M:%S)"; }

step "dependencies"
./deploy/install-deps.sh

# Tests write their scratch and screenshots here.
export MCULAB_TEST_OUTPUT="$root/test-output"
mkdir -p "$MCULAB_TEST_OUTPUT"

status=0
failed=()
# Record a failed stage; for ctest stages, also the names of the failed tests, so
# the final lines (all a CI log tail may show) say what failed.
fail() {
  status=1
  local what="$1" log="${2:-}"
  if [ -n "$log" ] && [ -s "$log" ]; then
    what+=": $(cut -d: -f2 "$log" | tr '\n' ' ')"
  fi
  failed+=("$what")
}

if [ "$main" = 1 ]; then
  step "build (Release) in build/"
  # MCULAB_CRASH_POINTS: the crash-point test hook (common/crash_point.h) for
  # integration_crash_points; installed servers are built without it.
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMCULAB_CRASH_POINTS=ON >/dev/null
  cmake --build build -j "$jobs"
  step "tests: unit, integration, e2e"
  rm -f build/Testing/Temporary/LastTestsFailed.log  # ctest leaves an old one when all pass
  (cd build && ctest --output-on-failure -j "$jobs" --timeout 600 "${filter[@]}") ||
    fail "Release ctest" build/Testing/Temporary/LastTestsFailed.log
  if [ ${#filter[@]} -eq 0 ]; then
    step "web page: node unit tests and browser tests (headless Chromium)"
    ./tests/web/run.sh || fail "web page tests"
  fi
fi

if [ "$asan" = 1 ]; then
  step "build (AddressSanitizer + UBSan) in build-asan/"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMCULAB_SANITIZE=ON \
    -DMCULAB_BUILD_FIRMWARE=OFF -DMCULAB_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  step "unit tests under ASan + UBSan"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp}
  rm -f build-asan/Testing/Temporary/LastTestsFailed.log
  (cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 600 -L unit "${filter[@]}") ||
    fail "ASan ctest" build-asan/Testing/Temporary/LastTestsFailed.log
fi

if [ "$fuzz" = 1 ] && [ ${#filter[@]} -eq 0 ]; then
  step "fuzzing: each libFuzzer target for ${MCULAB_FUZZ_SECONDS:-10} s (clang, ASan + UBSan)"
  ./tests/fuzz/run.sh "${MCULAB_FUZZ_SECONDS:-10}" || fail "fuzzing"
fi

if [ "$bench" = 1 ] && [ "$main" = 1 ] && [ ${#filter[@]} -eq 0 ]; then
  step "benchmarks at tiny sizes (bench/run.sh --quick, build/bench-quick/RESULTS.md)"
  ./bench/run.sh --quick --build-dir build -j "$jobs" || fail "quick benchmarks"
fi

if [ "$status" = 0 ]; then
  step "all tests passed"
else
  step "SOME TESTS FAILED"
  printf '  failed: %s\n' "${failed[@]}"
fi
exit "$status"
