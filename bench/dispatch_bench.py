#!/usr/bin/env python3
"""Dispatch latency: submit -> running on an idle host board, through the real programs.

Starts a lab (mculab-server + mculab-agent + one host board, tests/lib/lablib.py), submits one
small job at a time and waits for it to end, so the board is idle at every submit. For each job:
  submit -> running   the server's own job_transitions (creation to "running"), in microseconds
                      (time_us) shown as ms: what a user sees (the agent reports "running" once the runner process is started)
  agent breakdown     the agent's run summary line: assignment -> workload built -> runner started,
                      in us
With --baseline-agent PATH the same jobs also run on that agent binary (e.g. main's build), in the
same run, for the ratio.

Usage: MCULAB_BIN=build/bin bench/dispatch_bench.py [--jobs N] [--baseline-agent PATH]
Prints a markdown report (bench/results/dispatch.md holds the last one).
"""
import argparse
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
import lablib  # noqa: E402

FC_CSV = "id,batch,input_size,output_size\n0,1,16,8\n"
SUMMARY = re.compile(r"run (\d+) on [^:]+: SUCCEEDED in \d+ ms \(after the assignment arrived: "
                     r"run began at (\d+) us, workload built at (\d+) us, "
                     r"runner started at (\d+) us")


class AgentLab(lablib.Lab):
    """A lab whose agent binary can be another build's."""

    def __init__(self, name, boards, agent_binary):
        super().__init__(name, boards)
        self.agent_binary = agent_binary

    def start_agent(self):
        cfg = self.agent_config()
        self.agent = lablib.Proc("mculab-agent", [self.agent_binary, "--config", cfg],
                                 os.path.join(self.out_dir, "agent.log"))
        self.agent.wait_for("mculab-agent ready")


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def measure(agent_binary, jobs, label):
    lab = AgentLab(f"dispatch-bench-{label}", [lablib.host_board()], agent_binary)
    with lab:
        csv = lablib.write_csv(lab.home, "fc.csv", FC_CSV)
        ids = []
        # One warm-up job: first-run costs (runner identity hash, page cache) are not dispatch.
        for i in range(jobs + 1):
            res = lab.cli_json("submit", "--kind", "host", "--op", "fully_connected_s8", "--cases",
                               csv, "--iterations", "1", "--wait")
            if res["state"] != "succeeded":
                raise SystemExit(f"job {res['id']} ended {res['state']}: {res.get('message')}")
            if i > 0:
                ids.append(res["id"])
        db = sqlite3.connect(f"file:{lab.db_path}?mode=ro", uri=True)
        total, to_assigned = [], []
        for job in ids:
            rows = db.execute("SELECT from_state, to_state, COALESCE(time_us, time_ms * 1000) "
                              "FROM job_transitions WHERE job_id = ? ORDER BY id",
                              (job,)).fetchall()
            created = min(t for f, _, t in rows if f == "")
            running = min(t for _, s, t in rows if s == "running")
            assigned = min(t for _, s, t in rows if s == "assigned")
            total.append((running - created) / 1000)
            to_assigned.append((assigned - created) / 1000)
        db.close()
        agent = [(int(m.group(2)), int(m.group(3)), int(m.group(4)))
                 for m in SUMMARY.finditer("".join(lab.agent.lines))]
        agent = agent[1:]  # the warm-up job
    return total, to_assigned, agent


def report(label, total, to_assigned, agent):
    lines = [f"| {label}: submit -> running (ms) | {statistics.median(total):.3f} | "
             f"{percentile(total, 95):.3f} | {statistics.mean(total):.3f} | {max(total):.3f} |",
             f"| {label}: submit -> assigned, in the server (ms) | "
             f"{statistics.median(to_assigned):.3f} | {percentile(to_assigned, 95):.3f} | "
             f"{statistics.mean(to_assigned):.3f} | {max(to_assigned):.3f} |"]
    if agent:
        began = [a for a, _, _ in agent]
        built = [b for _, b, _ in agent]
        started = [c for _, _, c in agent]
        lines.append(f"| {label}: assignment received -> run began on the board's thread (us) | "
                     f"{statistics.median(began):.0f} | {percentile(began, 95)} | "
                     f"{statistics.mean(began):.0f} | {max(began)} |")
        lines.append(f"| {label}: assignment received -> workload built, in the agent (us) | "
                     f"{statistics.median(built):.0f} | {percentile(built, 95)} | "
                     f"{statistics.mean(built):.0f} | {max(built)} |")
        lines.append(f"| {label}: assignment received -> runner started, in the agent (us) | "
                     f"{statistics.median(started):.0f} | {percentile(started, 95)} | "
                     f"{statistics.mean(started):.0f} | {max(started)} |")
    return lines


def main():
    lablib.BIN = os.path.abspath(lablib.BIN)  # the agent's config names the runner by it
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("MCULAB_BENCH_JOBS", "50")))
    ap.add_argument("--baseline-agent", default="")
    args = ap.parse_args()
    runs = [("this agent", os.path.join(lablib.BIN, "mculab-agent"))]
    if args.baseline_agent:
        runs.insert(0, ("baseline agent", args.baseline_agent))
    out = ["| what | p50 | p95 | mean | max |", "|---|---|---|---|---|"]
    medians = {}
    for label, binary in runs:
        total, to_assigned, agent = measure(binary, args.jobs, label.split()[0])
        medians[label] = statistics.median(total)
        out += report(label, total, to_assigned, agent)
    print("# Dispatch: submit -> running on an idle host board\n")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{os.cpu_count()} CPUs, {platform.platform()}; {args.jobs} jobs per agent, one at a "
          f"time (each waits for the previous to end), after one warm-up job.\n")
    print("\n".join(out))
    if len(medians) == 2:
        base, this = medians["baseline agent"], medians["this agent"]
        print(f"\nRatio of p50s (this / baseline): {this / base:.2f}" if base else "")
    print("\nsubmit -> running comes from the server's job_transitions (microseconds, time_us); "
          "target: p50 < 1 ms on an idle machine. Load average at the end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.")


if __name__ == "__main__":
    main()
