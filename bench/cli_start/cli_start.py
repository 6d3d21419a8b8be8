#!/usr/bin/env python3
"""CLI start-up: how long `mculab --help` takes, and how long `mculab boards` takes to put its
first byte on the wire (the HTTP/2 preface gRPC sends once connected), next to the floor: the
same spawn of /bin/true. Each figure is the median of --runs spawns (posix_spawn, output to
/dev/null); the listener is a plain TCP socket in this process that never answers, so the time
is the CLI's own: loading, argument parsing, channel set-up, connect.

  bench/cli_start/cli_start.py --mculab build/bin/mculab --runs 50 [--json FILE] [--markdown FILE]

Also reports what the dynamic loader did for --help (LD_DEBUG=statistics: relocation time, and
the shared objects loaded, from ldd).
"""
import argparse
import json
import os
import re
import resource
import select
import socket
import statistics
import subprocess
import time

DEVNULL = os.open(os.devnull, os.O_RDWR)


def spawn(argv, env):
    fa = [(os.POSIX_SPAWN_DUP2, DEVNULL, 0), (os.POSIX_SPAWN_DUP2, DEVNULL, 1),
          (os.POSIX_SPAWN_DUP2, DEVNULL, 2)]
    return os.posix_spawn(argv[0], argv, env, file_actions=fa)


def child_cpu_ms():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000


def time_exit(argv, env):
    """(wall ms, CPU ms) from spawn to exit."""
    c0 = child_cpu_ms()
    t0 = time.perf_counter()
    pid = spawn(argv, env)
    os.waitpid(pid, 0)
    return (time.perf_counter() - t0) * 1000, child_cpu_ms() - c0


def time_first_byte(argv, env, listener):
    """(wall ms to the first byte, CPU ms until killed right after it)."""
    c0 = child_cpu_ms()
    t0 = time.perf_counter()
    pid = spawn(argv, env)
    conn = None
    try:
        r, _, _ = select.select([listener], [], [], 10)
        if not r:
            raise SystemExit("cli_start: the CLI never connected")
        conn, _ = listener.accept()
        r, _, _ = select.select([conn], [], [], 10)
        if not r or not conn.recv(1):
            raise SystemExit("cli_start: the CLI connected but sent nothing")
        wall = (time.perf_counter() - t0) * 1000
    finally:
        if conn:
            conn.close()
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return wall, child_cpu_ms() - c0


def median(fn, runs):
    """Median and p90 wall ms, median CPU ms."""
    fn()  # warm the page cache
    xs = [fn() for _ in range(runs)]
    walls = sorted(x[0] for x in xs)
    return (statistics.median(walls), walls[int(0.9 * (len(walls) - 1))],
            statistics.median(x[1] for x in xs))


def loader_facts(mculab):
    env = dict(os.environ, LD_DEBUG="statistics")
    r = subprocess.run([mculab, "--help"], capture_output=True, text=True, env=env)
    facts = {}
    m = re.search(r"total startup time in dynamic loader:\s*([\d,]+) cycles", r.stderr)
    if m:
        facts["loader_cycles"] = int(m.group(1).replace(",", ""))
    m = re.search(r"time needed for relocation:\s*([\d,]+) cycles \(([\d.]+)%\)", r.stderr)
    if m:
        facts["relocation_share_pct"] = float(m.group(2))
    m = re.search(r"number of relocations:\s*(\d+)", r.stderr)
    if m:
        facts["relocations"] = int(m.group(1))
    ldd = subprocess.run(["ldd", mculab], capture_output=True, text=True).stdout
    facts["shared_objects"] = sum(1 for line in ldd.splitlines() if "=>" in line or "ld-linux" in line)
    facts["binary_mib"] = os.path.getsize(mculab) / 2**20
    return facts


def markdown(r):
    """Table rows: wall median and p90, CPU median, the floor (/bin/true), target, target ÷ wall."""
    return (f"| `mculab --help` | {r['help_ms']:.2f} | {r['help_p90_ms']:.2f} | "
            f"{r['help_cpu_ms']:.2f} | {r['floor_ms']:.2f} / {r['floor_cpu_ms']:.2f} | 5 | "
            f"{5 / r['help_ms']:.2f} |\n"
            f"| `mculab boards`, spawn to first byte on the wire | {r['boards_first_byte_ms']:.2f} | "
            f"{r['boards_first_byte_p90_ms']:.2f} | {r['boards_cpu_ms']:.2f} | "
            f"{r['floor_ms']:.2f} / {r['floor_cpu_ms']:.2f} | 10 | "
            f"{10 / r['boards_first_byte_ms']:.2f} |\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mculab", required=True)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--json")
    p.add_argument("--markdown")
    args = p.parse_args()
    mculab = os.path.abspath(args.mculab)

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "MCULAB_SERVER": f"127.0.0.1:{port}",
           "MCULAB_TOKEN": "bench"}

    r = {"runs": args.runs}
    r["floor_ms"], r["floor_p90_ms"], r["floor_cpu_ms"] = median(
        lambda: time_exit(["/bin/true"], env), args.runs)
    r["help_ms"], r["help_p90_ms"], r["help_cpu_ms"] = median(
        lambda: time_exit([mculab, "--help"], env), args.runs)
    r["boards_first_byte_ms"], r["boards_first_byte_p90_ms"], r["boards_cpu_ms"] = median(
        lambda: time_first_byte([mculab, "boards"], env, listener), args.runs)
    r.update(loader_facts(mculab))

    md = markdown(r)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write(md)
    if not args.json and not args.markdown:
        print(json.dumps(r, indent=1))
        print(md, end="")


if __name__ == "__main__":
    main()
