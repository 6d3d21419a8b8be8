# The history API's views over a large job table (bench/history_api_bench.cc).
register history_api "History API: every view over 100,000 jobs" history_api_bench
bench_history_api() {
  local out=$1 work=$2 jobs=100000
  [ "$QUICK" = 1 ] && jobs=200
  MCULAB_BENCH_JOBS=$jobs "$BIN/history_api_bench" --benchmark_format=json \
    --benchmark_out="$work/history.json" >"$work/stdout.txt"
  echo "\`history_api_bench\` with $jobs jobs (targets: a page < 50 ms p95, one job < 2 ms p50)." >>"$out"
  echo >>"$out"
  gbench table "$work/history.json" >>"$out"
}
