# The gap between consecutive jobs on one QEMU board, cold against warm (bench/qemu_gap_bench.cc):
# jobs that arrive at an idle board (300 ms between a job's end and the next). Target < 5 ms.
register qemu_gap "QEMU boards: the gap between jobs, cold against warm" qemu_gap_bench
bench_qemu_gap() {
  local out=$1 work=$2 env=(MCULAB_BENCH_RUNS=20 MCULAB_BENCH_IDLE_MS=300)
  [ "$QUICK" = 1 ] && env=(MCULAB_BENCH_RUNS=3 MCULAB_BENCH_ITERATIONS=2 MCULAB_BENCH_IDLE_MS=50)
  env "${env[@]}" "$BIN/qemu_gap_bench" >"$work/stdout.txt"
  cat "$work/stdout.txt" >>"$out"
}
