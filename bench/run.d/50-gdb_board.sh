# The gdb board against QEMU's gdbstub next to the direct QEMU board (bench/gdb_board_bench.cc).
register gdb_board "Boards: gdb backend against QEMU's gdbstub, next to the direct QEMU board" \
  gdb_board_bench
bench_gdb_board() {
  local out=$1 work=$2 runs=20
  [ "$QUICK" = 1 ] && runs=1
  MCULAB_BENCH_RUNS=$runs "$BIN/gdb_board_bench" >"$work/stdout.txt"
  cat "$work/stdout.txt" >>"$out"
}
