#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*.cc: clang, AddressSanitizer + UBSan) in build-fuzz/
# and runs each for SECONDS (default 10) from its seed corpus (tests/fuzz/corpus/<target>/; new
# inputs go to a scratch copy, the repo's corpus is not changed). A crash leaves its input in
# $MCULAB_TEST_OUTPUT/fuzz/ (default test-output/fuzz/) and fails the run. Prints, per target, the
# executions it made without a crash, then "N passed, M failed".
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-10}
shift || true
case "$seconds" in ''|*[!0-9]*) echo "tests/fuzz/run.sh: SECONDS must be a whole number, not $seconds" >&2; exit 2 ;; esac
out="${MCULAB_TEST_OUTPUT:-$root/test-output}/fuzz"
mkdir -p "$out"

if ! command -v clang++ >/dev/null 2>&1; then
  echo "tests/fuzz/run.sh: clang++ is missing (apt-get install clang libfuzzer-14-dev; deploy/install-deps.sh does)" >&2
  exit 2
fi
CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMCULAB_FUZZ=ON -DMCULAB_BUILD_TESTS=OFF -DMCULAB_BUILD_BENCH=OFF -DMCULAB_BUILD_FIRMWARE=OFF \
  >"$out/cmake.log" 2>&1 || { cat "$out/cmake.log" >&2; exit 1; }
cmake --build "$root/build-fuzz" -j "$(nproc 2>/dev/null || echo 2)" --target fuzz_all || exit 1

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for c in "$here"/fuzz_*.cc; do targets+=("$(basename "$c" .cc)"); done
fi
passed=0
failed=0
for t in "${targets[@]}"; do
  bin="$root/build-fuzz/fuzz/$t"
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/mculab-fuzz-$t.XXXXXX")
  log="$out/$t.log"
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$out/$t-" "$scratch" "$here/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1)
  rm -rf "$scratch"
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "fuzz $t: ${runs:-?} executions in ${seconds} s, no crash"
  else
    failed=$((failed + 1))
    echo "fuzz $t: FAILED (exit $rc); the crashing input and log are in $out/ ($log):"
    grep -E "ERROR|SUMMARY|runtime error" "$log" | head -5
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
