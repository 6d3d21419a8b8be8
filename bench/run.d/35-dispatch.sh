# Dispatch latency: submit -> running on an idle host board, through the real server, agent and
# sandboxed host runner (bench/dispatch_bench.py). Target p50 < 1 ms. With
# MCULAB_BENCH_BASELINE_AGENT=PATH (e.g. main's mculab-agent) the same jobs also run on that agent.
register dispatch "Dispatch: submit -> running on an idle host board" \
  mculab-server mculab-agent mculab mculab-runner-host
bench_dispatch() {
  local out=$1 work=$2 jobs=50 base=()
  [ "$QUICK" = 1 ] && jobs=2
  [ -n "${MCULAB_BENCH_BASELINE_AGENT:-}" ] && base=(--baseline-agent "$MCULAB_BENCH_BASELINE_AGENT")
  MCULAB_BIN="$BIN" "$PY" "$ROOT/bench/dispatch_bench.py" --jobs "$jobs" "${base[@]}" \
    >"$work/stdout.txt"
  # The script's own title line is the section's.
  tail -n +3 "$work/stdout.txt" >>"$out"
}
