#!/usr/bin/env bash
# Sets up and starts a local mculab lab: installs what is missing, builds (Release), starts
# mculab-server and mculab-agent with one emulated Corstone-300 board (QEMU mps3-an547) and one
# host board, runs the sample operator benchmark from examples/ and a sample .tflite model, prints
# their results and the commands to try next, and leaves the lab running.
#
#   ./deploy/quickstart.sh          start (or restart) the lab and run the sample job
#   ./deploy/quickstart.sh --stop   stop the lab
#
# State lives in $MCULAB_HOME (default ~/.local/share/mculab); ports come from MCULAB_GRPC_PORT
# (default 7420) and MCULAB_HTTP_PORT (default 8080).
#
# Auth: unless your CLI config (~/.config/mculab/config.toml) already holds a token the lab
# accepts, an admin account named after you is made (or given a new token) and its token is
# written there (mode 0600). The agent gets its own agent token ($MCULAB_HOME/agent.token).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
home=${MCULAB_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/mculab}
grpc_port=${MCULAB_GRPC_PORT:-7420}
http_port=${MCULAB_HTTP_PORT:-8080}
run_dir="$home/run"
log_dir="$home/logs"
bin="$root/build/bin"

say() { printf '%s\n' "$*"; }
die() { printf 'quickstart: error: %s\n' "$*" >&2; exit 1; }

stop_lab() {
  local stopped=0
  for name in agent server; do
    local pidfile="$run_dir/$name.pid"
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
      stopped=1
    fi
    rm -f "$pidfile"
  done
  return $((1 - stopped))
}

# Waits for a "ready" line in a log; fails with the log's tail if the process dies first.
wait_ready() {
  local name=$1 pid=$2 log=$3 pattern=$4 timeout=${5:-60}
  local start=$SECONDS
  while ! grep -q "$pattern" "$log" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$log" >&2 || true
      die "$name exited before it was ready (log: $log)"
    fi
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      tail -n 20 "$log" >&2 || true
      die "$name was not ready after ${timeout}s (log: $log)"
    fi
    sleep 0.1
  done
}

port_busy() {
  # ss is in iproute2; fall back to bash's /dev/tcp.
  if command -v ss >/dev/null 2>&1; then
    ss -ltnH "sport = :$1" 2>/dev/null | grep -q .
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

case "${1:-}" in
  --stop)
    if stop_lab; then say "mculab lab stopped"; else say "no mculab lab was running (home $home)"; fi
    exit 0 ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  "") ;;
  *) die "unknown option $1 (use --stop or --help)" ;;
esac

say "==> dependencies"
"$root/deploy/install-deps.sh"

say "==> build (Release)"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
# What the README's commands use: the programs, both runners, the QEMU counting plugin (emulated
# events), the example runner (bring your own runtime) and the Cortex-M55 and Cortex-M7 firmware.
cmake --build "$root/build" -j "$(nproc)" --target mculab-server mculab-agent mculab \
  mculab-runner-host mculab-example-runner-host mculab-tflite-runner-host mculab-tflite-writer \
  mculab_qemu_counters mculab_firmware_an547 mculab_firmware_an500

elf="$root/build/firmware/mculab-runner-an547.elf"
[ -f "$elf" ] || die "the an547 runner firmware was not built ($elf); is gcc-arm-none-eabi installed?"
elf_m7="$root/build/firmware/mculab-runner-an500.elf"
[ -f "$elf_m7" ] || die "the an500 runner firmware was not built ($elf_m7)"

mkdir -p "$run_dir" "$log_dir"
if stop_lab; then say "==> stopped the lab that was running"; fi
if port_busy "$grpc_port"; then
  die "port $grpc_port is in use by another program; set MCULAB_GRPC_PORT to a free port"
fi
if port_busy "$http_port"; then
  die "port $http_port is in use by another program; set MCULAB_HTTP_PORT to a free port"
fi

admin() { "$bin/mculab-server" admin "$@" --home "$home"; }

# The agent's own token, bound to its name; a new one when the file is missing or the lab does
# not know it (a fresh home) or it was revoked.
agent_name="$(hostname -s 2>/dev/null || echo local)-agent"
agent_token_file="$home/agent.token"
agent_token_ok=0
if [ -s "$agent_token_file" ]; then
  agent_id=$(head -c 14 "$agent_token_file")
  if admin user list 2>/dev/null | grep -E "^$agent_name " | grep -q "$agent_id\( \|,\|\$\)"; then
    admin user list 2>/dev/null | grep -E "^$agent_name " | grep -q "$agent_id (revoked)" || agent_token_ok=1
  fi
fi
if [ "$agent_token_ok" = 0 ]; then
  (umask 077; admin agent add "$agent_name" 2>/dev/null > "$agent_token_file") ||
    die "could not make an agent token (mculab-server admin agent add $agent_name)"
fi
chmod 600 "$agent_token_file"

cat > "$home/agent.toml" <<TOML
# Written by deploy/quickstart.sh: one emulated Corstone-300 and one host board.
[agent]
name = "$agent_name"
server = "127.0.0.1:$grpc_port"
spool_dir = "$home/agent-spool"
token_file = "$agent_token_file"

# Every runner runs confined (README "Team set-up"): bubblewrap, or where it cannot work (a chroot,
# a container) namespaces without a private file view; the agent's log says which.
[sandbox]
mode = "auto"

[[board]]
name = "an547-0"
kind = "corstone300-qemu"
backend = "qemu"
firmware = "$elf"
# Jobs' own runner ELFs (mculab submit --firmware): inside QEMU, without semihosting, sandboxed.
allow_custom_runners = true
icount_shift = 5
# The next job's QEMU waits started and halted: queued jobs follow each other in about a
# millisecond instead of a QEMU start (README "Using the lab").
warm = true
timeout_s = 300
tags = { cpu = "cortex-m55" }

[[board]]
name = "an500-0"
kind = "cm7-qemu"
backend = "qemu"
machine = "mps2-an500"
firmware = "$elf_m7"
icount_shift = 5
warm = true
timeout_s = 300
tags = { cpu = "cortex-m7" }

[[board]]
name = "host-0"
kind = "host"
backend = "host"
runner = "$bin/mculab-runner-host"
timeout_s = 300
TOML

say "==> starting mculab-server (grpc 127.0.0.1:$grpc_port, http 127.0.0.1:$http_port, home $home)"
: > "$log_dir/server.log"
nohup "$bin/mculab-server" --home "$home" --grpc-listen "127.0.0.1:$grpc_port" \
  --http-listen "127.0.0.1:$http_port" --web-root "$root/web" >>"$log_dir/server.log" 2>&1 &
echo $! > "$run_dir/server.pid"
wait_ready mculab-server "$(cat "$run_dir/server.pid")" "$log_dir/server.log" "mculab-server ready"

say "==> starting mculab-agent (boards an547-0, an500-0, host-0)"
: > "$log_dir/agent.log"
nohup "$bin/mculab-agent" --config "$home/agent.toml" >>"$log_dir/agent.log" 2>&1 &
echo $! > "$run_dir/agent.pid"
wait_ready mculab-agent "$(cat "$run_dir/agent.pid")" "$log_dir/agent.log" "mculab-agent ready"

export MCULAB_SERVER="127.0.0.1:$grpc_port"

# Your token: keep the one in the CLI config when the lab accepts it, else make one and store it.
cli_config="${XDG_CONFIG_HOME:-$HOME/.config}/mculab/config.toml"
if ! env -u MCULAB_TOKEN "$bin/mculab" boards >/dev/null 2>&1; then
  me=$(id -un 2>/dev/null || echo admin)
  if admin user list 2>/dev/null | grep -qE "^$me "; then
    token=$(admin token add "$me" 2>/dev/null) || die "could not make a token for $me"
  else
    token=$(admin user add "$me" --role admin 2>/dev/null) || die "could not add user $me"
  fi
  mkdir -p "$(dirname "$cli_config")"
  (
    umask 077
    { [ -f "$cli_config" ] && grep -v '^[[:space:]]*token[[:space:]]*=' "$cli_config" || true
      printf 'token = "%s"\n' "$token"; } > "$cli_config.new"
  )
  mv "$cli_config.new" "$cli_config"
  chmod 600 "$cli_config"
  say "==> your token (user $me, admin) is in $cli_config"
fi
web_token=$(sed -n 's/^[[:space:]]*token[[:space:]]*=[[:space:]]*"\(.*\)"[[:space:]]*$/\1/p' "$cli_config" | tail -1)

say "==> boards (new boards run a health check before users' jobs: health unknown, then good)"
"$bin/mculab" boards

say "==> sample job: conv2d_s8 sweep from examples/conv2d_sweep.csv on the emulated Corstone-300"
"$bin/mculab" submit --kind corstone300-qemu --op conv2d_s8 \
  --cases "$root/examples/conv2d_sweep.csv" --iterations 20 --warmup 2 \
  --label "quickstart sample" --wait
# The sample's id (the boards' health checks took the first ones).
sample_id=$("$bin/mculab" jobs --label "quickstart sample" --limit 1 --json |
  sed -n 's/^ *"id": \([0-9][0-9]*\),*$/\1/p' | head -1)
sample_id=${sample_id:-1}

say "==> sample model: the writer's int8 network (tools/tflite_writer) on the emulated Cortex-M55"
"$bin/mculab-tflite-writer" "$home/sample.tflite" >/dev/null
"$bin/mculab" submit --kind corstone300-qemu --model "$home/sample.tflite" --iterations 5 \
  --warmup 1 --label "quickstart model" --wait

cat <<TXT

The lab is running (logs in $log_dir).
Web page: http://localhost:$http_port/#token=$web_token
  (history, job pages with plots, compare, boards; the link hands the page your token once)
Try next:
  export MCULAB_SERVER=127.0.0.1:$grpc_port PATH="$bin:\$PATH"
  mculab boards
  mculab jobs
  mculab show $sample_id
  mculab export $sample_id --csv
  mculab-server admin user add alice --role member   # a token for a colleague (see README)
  mculab submit --kind host --op fully_connected_s8 --cases examples/fully_connected_sweep.csv --wait
  mculab models inspect $home/sample.tflite
  mculab show ID --ops        # the model job: per-layer time and events
  ./deploy/quickstart.sh --stop
TXT
