# One scheduling pass at 10,000 queued jobs x 500 boards (bench/scheduler_bench.cc). Target < 1 ms.
register scheduler "Scheduler: one pass, 10,000 queued x 500 boards, reservations and tags" \
  scheduler_bench
bench_scheduler() {
  local out=$1 work=$2 env=()
  [ "$QUICK" = 1 ] && env=(MCULAB_BENCH_QUEUED=200 MCULAB_BENCH_BOARDS=20)
  env "${env[@]}" "$BIN/scheduler_bench" $(gbench_flags) --benchmark_format=json \
    --benchmark_out="$work/scheduler.json" >"$work/stdout.txt"
  echo "\`scheduler_bench\` (Google Benchmark). \`BM_LabPass*\`: the Lab's own pass, its" \
    "\`Dispatcher::Plan\` over a job table and a board table (health checks on), then each" \
    "placement's pass plan from the Lab's \`PassPlanCache\`; \`BM_ScheduleOnly/50\` and \`/1\`" \
    "the domain's \`Schedule()\` alone (one board in 50 free, every board free). The Lab runs no pass at all when no board is free or nothing changed since a pass" \
    "that placed nothing (\`lab_test\` NoSchedulingPass*)." >>"$out"
  echo >>"$out"
  gbench table "$work/scheduler.json" --target-ms 1 >>"$out"
}
