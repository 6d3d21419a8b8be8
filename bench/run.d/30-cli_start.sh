# CLI start-up: `mculab --help`, and `mculab boards` to its first byte on the wire
# (bench/cli_start/cli_start.py). Targets < 5 ms and < 10 ms.
register cli_start "CLI start-up" mculab
bench_cli_start() {
  local out=$1 work=$2 runs=50
  [ "$QUICK" = 1 ] && runs=3
  "$PY" "$ROOT/bench/cli_start/cli_start.py" --mculab "$BIN/mculab" --runs "$runs" \
    --json "$work/cli.json"
  {
    echo "Median and p90 of $runs spawns (wall), median CPU time (user + system, from rusage: what"
    echo "the CLI itself costs, whatever else the machine runs); the floor is the same spawn of"
    echo "/bin/true (wall / CPU). First byte: the CLI is killed once it arrives."
    echo
    echo "| figure | wall median ms | wall p90 ms | CPU median ms | floor ms | target ms | target ÷ wall |"
    echo "|---|---|---|---|---|---|---|"
    "$PY" - "$work/cli.json" "$ROOT/bench/cli_start" <<'PYEOF'
import json, sys
sys.path.insert(0, sys.argv[2])
import cli_start
r = json.load(open(sys.argv[1]))
sys.stdout.write(cli_start.markdown(r))
print()
print(f"The binary: {r['binary_mib']:.1f} MiB, {r['shared_objects']} shared objects loaded; "
      f"{r.get('relocations', 0)} relocations at start (LD_DEBUG=statistics).")
PYEOF
  } >>"$out"
}
