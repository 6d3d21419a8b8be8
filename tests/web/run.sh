#!/usr/bin/env bash
# The web page's tests: node unit tests of the pure modules, then the browser tests (Playwright
# driving /usr/bin/chromium) against $MCULAB_WEB_URL if set (with $MCULAB_TOKEN), else against
# tests/web/fixture_server.mjs started here on a free port with 100,000 synthetic jobs.
# Screenshots go to $MCULAB_TEST_OUTPUT/web/ (default test-output/web/); $MCULAB_CHROMIUM
# overrides the browser. Prints "N passed, M failed" last; exits non-zero when anything failed.
#   --unit-only      skip the browser tests
#   --jobs N         synthetic jobs in the fixture (default 100000)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

unit_only=0
fixture_jobs=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --unit-only) unit_only=1 ;;
    --jobs) fixture_jobs="$2"; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "tests/web/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

export MCULAB_TEST_OUTPUT="${MCULAB_TEST_OUTPUT:-$root/test-output}"
scratch="$MCULAB_TEST_OUTPUT/web"
mkdir -p "$scratch"

passed=0
failed=0
# Runs node's test runner on the given files: spec output on the terminal, TAP into a file whose
# "# pass" / "# fail" lines are added to the totals. A runner that dies without a summary counts
# as one failure.
run_node_tests() {
  local name="$1"; shift
  local tap="$scratch/$name.tap"
  rm -f "$tap"
  node --test --test-concurrency=1 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" "$@"
  local rc=$?
  local p f c
  p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" 2>/dev/null | tail -1)
  f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" 2>/dev/null | tail -1)
  c=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$tap" 2>/dev/null | tail -1)
  if [ -z "$p" ] || [ -z "$f" ]; then
    echo "tests/web: $name: the test runner ended without a summary (exit $rc)" >&2
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + p))
  failed=$((failed + f + ${c:-0}))
  if [ "$rc" != 0 ] && [ "$f" = 0 ] && [ "${c:-0}" = 0 ]; then failed=$((failed + 1)); fi
}

if [ ! -d "$root/web/node_modules/playwright-core" ] || [ ! -f "$root/web/vendor/uPlot.esm.js" ]; then
  echo "tests/web: installing web/ dependencies (npm ci)"
  (cd "$root/web" && npm ci --no-audit --no-fund) || { echo "tests/web: npm ci failed"; echo "0 passed, 1 failed"; exit 1; }
fi

echo "==== web unit tests"
run_node_tests unit "$here"/unit/*.test.mjs

fixture_pid=""
cleanup() {
  if [ -n "$fixture_pid" ]; then kill "$fixture_pid" 2>/dev/null; wait "$fixture_pid" 2>/dev/null; fi
}
trap cleanup EXIT

if [ "$unit_only" = 0 ]; then
  if [ ! -x "${MCULAB_CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "tests/web: ${MCULAB_CHROMIUM:-/usr/bin/chromium} is missing (apt-get install chromium)" >&2
    failed=$((failed + 1))
  else
    if [ -z "${MCULAB_WEB_URL:-}" ]; then
      export MCULAB_TOKEN="${MCULAB_TOKEN:-fixture-token-$$}"
      log="$scratch/fixture_server.log"
      node "$here/fixture_server.mjs" --port 0 --jobs "$fixture_jobs" --token "$MCULAB_TOKEN" >"$log" 2>&1 &
      fixture_pid=$!
      url=""
      for _ in $(seq 1 300); do  # the ready line, within 30 s
        url=$(sed -n 's/^fixture_server ready \(http[^ ]*\)$/\1/p' "$log")
        [ -n "$url" ] && break
        kill -0 "$fixture_pid" 2>/dev/null || break
        sleep 0.1
      done
      if [ -z "$url" ]; then
        echo "tests/web: fixture_server.mjs did not start:" >&2
        cat "$log" >&2
        echo "$passed passed, $((failed + 1)) failed"
        exit 1
      fi
      export MCULAB_WEB_URL="$url" MCULAB_FIXTURE=1
      echo "==== web browser tests against fixture_server.mjs at $url ($fixture_jobs jobs)"
    else
      echo "==== web browser tests against $MCULAB_WEB_URL"
    fi
    run_node_tests browser "$here"/browser/*.test.mjs
    echo "screenshots: $scratch"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
