# One scheduling pass at 10,000 queued jobs x 500 boards (bench/scheduler_bench.cc). Target < 1 ms.
register scheduler "Scheduler: one pass, 10,000 queued x 500 boards, reservations and tags" \
  scheduler_bench
bench_scheduler() {
  local out=$1 work=$2 env=() reps=()
  [ "$QUICK" = 1 ] && env=(MCULAB_BENCH_QUEUED=200 MCULAB_BENCH_BOARDS=20)
  # Full runs: five repetitions, the table shows their median.
  [ "$QUICK" = 0 ] && reps=(--benchmark_repetitions=5)
  env "${env[@]}" "$BIN/scheduler_bench" $(gbench_flags) "${reps[@]}" --benchmark_format=json \
    --benchmark_out="$work/scheduler.json" >"$work/stdout.txt"
  echo "\`scheduler_bench\` (Google Benchmark). \`BM_LabPass*\`: the Lab's own pass, its" \
    "\`Dispatcher::Plan\` over a job table and a board table (health checks on; the queue grouped" \
    "by user and priority and the boards' slots as the tables keep them), then each placement's" \
    "pass plan from the Lab's \`PassPlanCache\`. The domain's \`Schedule()\` alone, one board in" \
    "50 free (\`/50\`) or every board free (\`/1\`): \`BM_ScheduleGrouped\` over the queue grouped" \
    "once, as the Lab's pass calls it; \`BM_ScheduleOnly\` over a plain queue, which it groups each" \
    "call (tests and one-off callers). The Lab runs no pass at all when no board is free or nothing" \
    "changed since a pass that placed nothing (\`lab_test\` NoSchedulingPass*). On a loaded machine" \
    "real time also counts waits for a core: read the cpu column." >>"$out"
  echo >>"$out"
  gbench table "$work/scheduler.json" --target-ms 1 >>"$out"
}
