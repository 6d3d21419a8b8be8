# Sample ingest: the fastest raw SQLite insert into the same table and indexes, the store, the Lab,
# gRPC (bench/store_ingest_bench.cc), and end to end through real agents with fake boards, their
# spool, gRPC and a real server (bench/fleet). Target: end to end >= 0.8 of raw.
register ingest "Ingest: end to end (fleet of fake boards) against the fastest raw SQLite insert" \
  store_ingest_bench mculab-server mculab-agent mculab
bench_ingest() {
  local out=$1 work=$2 samples=1048576 fleet=(--agents 1 --boards 20 --cases 4 --iterations 13108)
  if [ "$QUICK" = 1 ]; then
    samples=4096
    fleet=(--agents 2 --boards 2 --cases 2 --iterations 50)
  fi
  MCULAB_BENCH_SAMPLES=$samples "$BIN/store_ingest_bench" $(gbench_flags) \
    --benchmark_format=json --benchmark_out="$work/ingest.json" >"$work/stdout.txt"
  MCULAB_BIN="$BIN" MCULAB_TEST_OUTPUT="$work" "$PY" "$ROOT/bench/fleet/fleet.py" "${fleet[@]}" \
    --json "$work/fleet.json"
  local raw raw_name e2e
  read -r raw raw_name < <(gbench best "$work/ingest.json" BM_RawSqliteInsert items_per_second)
  e2e=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["ingest_rows_per_s"])' \
    "$work/fleet.json")
  {
    echo "Items are sample rows. In process (\`store_ingest_bench\`, $samples samples):"
    echo
    gbench table "$work/ingest.json"
    echo
    echo "End to end (\`bench/fleet/fleet.py ${fleet[*]}\`: real mculab-agent processes, fake"
    echo "boards, the agent's spool, gRPC, a real mculab-server; the window is the lab's own"
    echo "record, first job running to last job ended):"
    echo
    "$PY" -c 'import json,sys; sys.path.insert(0, sys.argv[2]); import fleet; sys.stdout.write(fleet.MARKDOWN_HEAD + fleet.markdown(json.load(open(sys.argv[1]))))' \
      "$work/fleet.json" "$ROOT/bench/fleet"
    echo
    echo "| figure | rows/s | baseline | baseline rows/s | ratio | target |"
    echo "|---|---|---|---|---|---|"
    "$PY" -c 'import sys; e,r=float(sys.argv[1]),float(sys.argv[2]); print(f"| end to end (fleet) | {e/1e3:.0f} k | fastest raw insert ({sys.argv[3]}) | {r/1e3:.0f} k | {e/r:.2f} | >= 0.8 |")' \
      "$e2e" "$raw" "$raw_name"
    # The same comparison in CPU time, which the machine's other work does not move: what a row
    # costs raw SQLite (one thread) against what it costs the server and the agents together.
    "$PY" - "$work/ingest.json" "$raw_name" "$work/fleet.json" "$samples" <<'PYEOF'
import json, sys
bench = next(b for b in json.load(open(sys.argv[1]))["benchmarks"] if b["name"] == sys.argv[2])
scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[bench.get("time_unit", "ns")]
raw_us = bench["cpu_time"] * scale / int(sys.argv[4])
f = json.load(open(sys.argv[3]))
server, agents = f["server_cpu_us_per_row"], f["agents_cpu_us_per_row"]
# At --quick's few hundred rows the processes' CPU time can round to 0 (the clock ticks are
# 4-10 ms): then there is no ratio to give.
ratio = f"{raw_us / (server + agents):.2f}" if server + agents > 0 else "- (too few rows to time)"
print(f"| CPU per row (µs) | server {server:.2f} + agents {agents:.2f} = {server + agents:.2f} | "
      f"raw insert, one thread | {raw_us:.2f} | {ratio} | |")
PYEOF
  } >>"$out"
}
