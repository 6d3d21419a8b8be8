# 1,000 fake boards (10 agents x 100) at about 100 samples/s each through real agents into one
# server (bench/fleet): every job must succeed; the figures are the server's memory and CPU.
register fleet_soak "Fleet: 1,000 fake boards on 10 agents into one server" \
  mculab-server mculab-agent mculab
bench_fleet_soak() {
  local out=$1 work=$2
  local fleet=(--agents 10 --boards 100 --cases 2 --iterations 100 --sample-delay-ms 10 --submitters 8)
  # Quick: more boards than the server's default per-agent limit, so that path runs too.
  [ "$QUICK" = 1 ] && fleet=(--agents 2 --boards 70 --cases 1 --iterations 5 --submitters 8)
  MCULAB_BIN="$BIN" MCULAB_TEST_OUTPUT="$work" "$PY" "$ROOT/bench/fleet/fleet.py" "${fleet[@]}" \
    --json "$work/fleet.json"
  {
    echo "\`bench/fleet/fleet.py ${fleet[*]}\`: one job per board, all submitted at once through the"
    echo "CLI (the window includes the submits). Every job succeeded (fleet.py fails otherwise)."
    echo
    "$PY" -c 'import json,sys; sys.path.insert(0, sys.argv[2]); import fleet; sys.stdout.write(fleet.MARKDOWN_HEAD + fleet.markdown(json.load(open(sys.argv[1]))))' \
      "$work/fleet.json" "$ROOT/bench/fleet"
    "$PY" - "$work/fleet.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"\nSubmitting {r['jobs']} jobs took {r['submit_s']:.1f} s; the agents were ready "
      f"{r['agents_ready_s']:.1f} s after the first one started.")
PYEOF
  } >>"$out"
}
