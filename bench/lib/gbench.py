#!/usr/bin/env python3
"""Google Benchmark JSON (--benchmark_out=FILE --benchmark_format=json) to markdown, for
bench/run.sh's fragments.

  gbench.py table FILE [--filter REGEX] [--target-ms X]   one row per benchmark: time, items/s,
                                                          counters; with a target: target/time,
                                                          real and cpu
  gbench.py get FILE NAME FIELD                           one number (e.g. items_per_second);
                                                          NAME is a regex, the first match wins
  gbench.py best FILE REGEX FIELD                         the largest FIELD among matches, and
                                                          the benchmark's name
"""
import json
import re
import sys

TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def load(path):
    with open(path) as f:
        data = json.load(f)
    # Aggregates (mean, median) when repetitions ran, otherwise the plain runs.
    runs = [b for b in data["benchmarks"] if b.get("run_type") != "aggregate"]
    med = [b for b in data["benchmarks"] if b.get("aggregate_name") == "median"]
    return med or runs


def ms(b, field="real_time"):
    return b[field] * TO_MS[b.get("time_unit", "ns")]


def fmt_rate(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M/s"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k/s"
    return f"{x:.0f} /s"


SKIP = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
        "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
        "items_per_second", "bytes_per_second", "label", "aggregate_name", "aggregate_unit",
        "error_occurred", "error_message"}


def table(path, filt=None, target_ms=None):
    rows = []
    head = "| benchmark | real time ms | cpu time ms | items/s | counters |"
    sep = "|---|---|---|---|---|"
    if target_ms:
        # Both ratios: on a loaded machine real time also counts the waits for a core.
        head += " target ms | target ÷ real time | target ÷ cpu time |"
        sep += "---|---|---|"
    rows += [head, sep]
    for b in load(path):
        if filt and not re.search(filt, b["name"]):
            continue
        if b.get("error_occurred"):
            rows.append(f"| {b['name']} | ERROR: {b.get('error_message', '')} | | | |")
            continue
        name = b["name"] + (f" ({b['label']})" if b.get("label") else "")
        counters = ", ".join(f"{k}={v:g}" for k, v in b.items()
                             if k not in SKIP and isinstance(v, (int, float)))
        rate = fmt_rate(b["items_per_second"]) if "items_per_second" in b else ""
        row = f"| {name} | {ms(b):.3f} | {ms(b, 'cpu_time'):.3f} | {rate} | {counters} |"
        if target_ms:
            row += f" {target_ms:g} | {target_ms / ms(b):.2f} | {target_ms / ms(b, 'cpu_time'):.2f} |"
        rows.append(row)
    return "\n".join(rows) + "\n"


def errors(path):
    return [b["name"] + ": " + b.get("error_message", "") for b in load(path)
            if b.get("error_occurred")]


def main(argv):
    cmd = argv[1]
    if cmd == "table":
        path = argv[2]
        filt = target = None
        rest = argv[3:]
        while rest:
            if rest[0] == "--filter":
                filt = rest[1]
            elif rest[0] == "--target-ms":
                target = float(rest[1])
            rest = rest[2:]
        sys.stdout.write(table(path, filt, target))
        return 1 if errors(path) else 0
    if cmd == "get":
        for b in load(argv[2]):
            if re.search(argv[3], b["name"]):
                print(ms(b) if argv[4] == "ms" else b[argv[4]])
                return 0
        return 1
    if cmd == "best":
        best = max((b for b in load(argv[2]) if re.search(argv[3], b["name"])),
                   key=lambda b: b.get(argv[4], 0))
        print(best[argv[4]], best["name"])
        return 0
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
