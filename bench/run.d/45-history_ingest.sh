# History API latency idle and under a concurrent ingest (bench/history_ingest_bench.cc), over
# 1,000,000 jobs.
register history_ingest "History API under ingest, 1,000,000 jobs" history_ingest_bench
bench_history_ingest() {
  local out=$1 work=$2 args=(--jobs 1000000)
  [ "$QUICK" = 1 ] && args=(--jobs 200 --samples 20000 --requests 20)
  {
    echo "\`history_ingest_bench ${args[*]}\` (its own output):"
    echo
    echo '```'
    "$BIN/history_ingest_bench" "${args[@]}"
    echo '```'
  } >>"$out"
}
