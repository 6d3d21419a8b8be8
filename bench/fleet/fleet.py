#!/usr/bin/env python3
"""Fleet simulator: a real mculab-server and N real mculab-agent processes with M fake boards each
(agent/boards/fake_board.h: the runner protocol simulated in the agent, so every sample goes
through the agent's run code, its spool, the gRPC link and the server's store, as a real board's).

Each board gets one job (named to it) of CASES x ITERATIONS iterations; --sample-delay-ms sets
each board's rate (0: as fast as the fake runner goes; D > 0: about 1000/D samples per second per
board). Measured from the lab's own records (server clock): the ingest window runs from the first
job's entry into running to the last job's end, and its rate is the sample rows stored in it per
second; the server's and agents' peak resident memory (VmHWM) come from /proc.

  bench/fleet/fleet.py --agents 1 --boards 20 --iterations 20000     # the ingest figure
  bench/fleet/fleet.py --agents 10 --boards 100 --sample-delay-ms 10  # 1,000 boards, soak

Writes a markdown fragment (--markdown FILE) and JSON (--json FILE); prints both otherwise.
Programs come from $MCULAB_BIN (default build/bin), as for the tests.
"""
import argparse
import concurrent.futures
import json
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
import lablib  # noqa: E402

FC_CSV_HEADER = "id,batch,input_size,output_size\n"


def proc_memory(pid):
    """(VmHWM, VmRSS) of a process in KiB, (0, 0) once it is gone."""
    hwm = rss = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
    except FileNotFoundError:
        pass
    return hwm, rss


def proc_cpu_s(pid):
    """User + system CPU seconds a process has used, 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except FileNotFoundError:
        return 0.0


def query(lab, sql, args=()):
    c = sqlite3.connect(f"file:{lab.db_path}?mode=ro", uri=True, timeout=30)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def run(args):
    boards = {}
    for a in range(args.agents):
        boards[f"fleet-{a}"] = [lablib.fake_board(f"f{a}-{b}", sample_delay_ms=args.sample_delay_ms)
                                for b in range(args.boards)]
    lab = lablib.Lab("fleet", boards["fleet-0"])
    try:
        if args.boards > 64:  # the server's default max_boards_per_agent
            config = os.path.join(lab.home, "server.toml")
            with open(config, "w") as f:
                f.write(f"max_boards_per_agent = {args.boards}\n")
            lab.server_args += ["--config", config]
        lab.start_server()
        t_agents = time.monotonic()
        lab.start_agent()
        agents = [lab.agent]
        for a in range(1, args.agents):
            agents.append(lab.add_agent(f"fleet-{a}", boards[f"fleet-{a}"]))
        agents_ready_s = time.monotonic() - t_agents

        csv = lablib.write_csv(lab.home, "fc.csv", FC_CSV_HEADER + "".join(
            f"{i},1,{16 + 8 * (i % 4)},8\n" for i in range(args.cases)))
        names = [b["name"] for bs in boards.values() for b in bs]

        def submit(name):
            return lab.cli_json("submit", "--board", name, "--kind", "fake", "--op",
                                "fully_connected_s8", "--cases", csv, "--iterations",
                                str(args.iterations), "--warmup", "0", "--label", "fleet")["id"]

        cpu0 = {p.p.pid: proc_cpu_s(p.p.pid) for p in [lab.server] + agents}
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.submitters) as pool:
            ids = list(pool.map(submit, names))
        submit_s = time.monotonic() - t0

        server_peak = 0
        deadline = time.monotonic() + args.timeout
        while True:
            server_peak = max(server_peak, proc_memory(lab.server.p.pid)[0])
            done = query(lab, "SELECT COUNT(*) FROM jobs WHERE state IN "
                              "('succeeded','failed','cancelled','timed_out') AND label = 'fleet'")[0][0]
            if done >= len(ids):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"fleet: {done} of {len(ids)} jobs ended within {args.timeout} s")
            time.sleep(0.2)
        wall_s = time.monotonic() - t0
        if lab.server.p.poll() is not None:
            raise SystemExit(f"fleet: the server exited ({lab.server.p.returncode})")

        states = dict(query(lab, "SELECT state, COUNT(*) FROM jobs WHERE label = 'fleet' GROUP BY 1"))
        first, last = query(lab, "SELECT MIN(started_ms), MAX(finished_ms) FROM jobs "
                                 "WHERE label = 'fleet'")[0]
        rows = query(lab, "SELECT COUNT(*) FROM samples")[0][0]
        window_s = max((last or 0) - (first or 0), 1) / 1000.0
        server_hwm, server_rss = proc_memory(lab.server.p.pid)
        server_cpu = proc_cpu_s(lab.server.p.pid) - cpu0[lab.server.p.pid]
        agents_cpu = sum(proc_cpu_s(p.p.pid) - cpu0[p.p.pid] for p in agents)
        agent_hwm = [proc_memory(p.p.pid)[0] for p in agents]
        result = {
            "agents": args.agents,
            "boards_per_agent": args.boards,
            "boards": len(names),
            "jobs": len(ids),
            "cases": args.cases,
            "iterations": args.iterations,
            "sample_delay_ms": args.sample_delay_ms,
            "states": states,
            "sample_rows": rows,
            "ingest_window_s": window_s,
            "ingest_rows_per_s": rows / window_s,
            "submit_s": submit_s,
            "wall_s": wall_s,
            "agents_ready_s": agents_ready_s,
            "server_vmhwm_kib": max(server_hwm, server_peak),
            "server_vmrss_kib": server_rss,
            "agent_vmhwm_kib_max": max(agent_hwm) if agent_hwm else 0,
            # CPU used from the first submit to the last job's end (the CLI's own not included):
            # on a machine of few cores the end-to-end rate is bounded by their sum per row.
            "server_cpu_s": server_cpu,
            "agents_cpu_s": agents_cpu,
            "server_cpu_us_per_row": server_cpu * 1e6 / max(rows, 1),
            "agents_cpu_us_per_row": agents_cpu * 1e6 / max(rows, 1),
        }
        if states.get("succeeded", 0) != len(ids):
            raise SystemExit(f"fleet: not every job succeeded: {states}")
        return result
    finally:
        lab.close()


MARKDOWN_HEAD = ("| agents x boards | cases x iterations | sample delay ms | sample rows | window s | "
                 "rows/s | server CPU µs/row | agents CPU µs/row | server VmHWM | agent VmHWM |\n"
                 "|---|---|---|---|---|---|---|---|---|---|\n")


def markdown(r):
    return (f"| {r['agents']} x {r['boards_per_agent']} = {r['boards']} | {r['cases']} x "
            f"{r['iterations']} | {r['sample_delay_ms']} | {r['sample_rows']:,} | "
            f"{r['ingest_window_s']:.2f} | {r['ingest_rows_per_s'] / 1000:.0f} k/s | "
            f"{r['server_cpu_us_per_row']:.2f} | {r['agents_cpu_us_per_row']:.2f} | "
            f"{r['server_vmhwm_kib'] / 1024:.0f} MiB | {r['agent_vmhwm_kib_max'] / 1024:.0f} MiB |\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", type=int, default=1)
    p.add_argument("--boards", type=int, default=20, help="fake boards per agent")
    p.add_argument("--cases", type=int, default=4)
    p.add_argument("--iterations", type=int, default=2000, help="per case (at most 100,000)")
    p.add_argument("--sample-delay-ms", type=int, default=0)
    p.add_argument("--submitters", type=int, default=4, help="CLI submits in parallel")
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--markdown", help="append a table row here")
    p.add_argument("--json", help="write the result here")
    args = p.parse_args()
    r = run(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write(markdown(r))
    if not args.json and not args.markdown:
        print(json.dumps(r, indent=1))
        print(MARKDOWN_HEAD + markdown(r), end="")


if __name__ == "__main__":
    main()
