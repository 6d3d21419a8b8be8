# The server's peak memory over one large run (bench/run_memory_bench.cc: VmHWM of one run per
# process), with the whole-run load as the baseline. Target < 64 MiB whatever the run's size.
register run_memory "Server memory: peak RSS over one run of 2 M and 20 M samples" run_memory_bench
bench_run_memory() {
  local out=$1 work=$2 sizes=(2000000 20000000) baseline=2000000
  if [ "$QUICK" = 1 ]; then sizes=(5000); baseline=5000; fi
  {
    echo "\`run_memory_bench --samples N\` (one process per run; its own output):"
    echo
    echo '```'
    for n in "${sizes[@]}"; do "$BIN/run_memory_bench" --samples "$n"; done
    echo "# baseline: the run loaded whole, as the finalisation used to"
    "$BIN/run_memory_bench" --samples "$baseline" --load-run
    echo '```'
  } >>"$out"
}
