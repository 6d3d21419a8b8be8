#!/usr/bin/env python3
"""Instructions per invocation of the int8 kernels on the emulated boards, reference vs fast.

Runs the generic runner (an547: Cortex-M55, Helium; an500: Cortex-M7, DSP) under QEMU with the
lab's counting plugin, once per layer shape and kernel set (the workload flag
MCULAB_WORKLOAD_REFERENCE_KERNELS picks the reference), through firmware_stub/tools/runner_probe.py,
and prints a Markdown table beside CMSIS-NN's counts for the same shapes (issue 24's table: CMSIS-NN
at its head, GCC 12 -O2, the same QEMU and plugin). Also checks that both sets give the same
output checksum. With --models, also every layer of the .tflite models there (and in its
subfolders), run by the TFLite runners (--tflite-an547, --tflite-an500) with each kernel set,
instructions per layer, then one summary row per model and board: instructions per inference and
per MAC with each set (MACs from `mculab models inspect --json`, given --mculab) and the
interpreter's own share, the instructions outside every operator's region per inference and per
operator (the loop, the op hooks, the variables' reset).

  bench/kernels.py --an547 build-arm-an547/firmware/mculab-runner-an547.elf \
      --an500 build-arm-an500/firmware/mculab-runner-an500.elf \
      --plugin build/lib/libmculab-qemu-counters.so \
      [--models ../shared/models/mlperf-tiny --tflite-an547 build/firmware/mculab-tflite-runner-an547.elf \
       --tflite-an500 build/firmware/mculab-tflite-runner-an500.elf [--mculab build/bin/mculab]]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "firmware_stub", "tools", "runner_probe.py")

# name, op, parameters in the op's order (firmware_stub/include/mculab/ops.h), MACs,
# CMSIS-NN instructions on the M55 and on the M7 (issue 24).
LAYERS = [
    ("conv 1x1, 25x5x64 -> 64", "conv2d_s8", "1,64,25,5,64,1,1,0,0,1,1", 25 * 5 * 64 * 64,
     202914, 1051097),
    ("depthwise 3x3 s1, 25x5x64", "depthwise_conv2d_s8", "1,64,25,5,1,3,3,1,1,1,1,1,1",
     25 * 5 * 64 * 9, 168690, 560977),
    ("conv 3x3 s2, 48x48x8 -> 16", "conv2d_s8", "1,8,48,48,16,3,3,1,1,2,2", 24 * 24 * 16 * 72,
     428886, 1933937),
    ("conv 10x4 s2, 49x10x1 -> 64", "conv2d_s8", "1,1,49,10,64,10,4,5,1,2,2", 25 * 5 * 64 * 40,
     306213, 1135513),
    ("fully connected 256 -> 128", "fully_connected_s8", "1,256,128", 256 * 128, 17122, 67955),
]
BOARDS = [(b, m, c) for b, m, c in [("an547", "mps3-an547", "M55"), ("an500", "mps2-an500", "M7")]
          if b in os.environ.get("MCULAB_BENCH_BOARDS", "an547,an500").split(",")]


def measure(elf, machine, plugin, op, params, kernels):
    """Returns (instructions of one measured invocation, output checksum, HELLO runtime)."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = os.path.join(tmp, "counts.txt")
        out = subprocess.run(
            [sys.executable, PROBE, "--qemu", elf, "--machine", machine, "--op", op, "--case",
             params, "--iterations", "1", "--warmup", "0", "--kernels", kernels,
             "--qemu-arg=-plugin", f"--qemu-arg={plugin},out={counts},events=instructions"],
            capture_output=True, text=True, timeout=600, check=True).stdout
        checksum = re.search(r"CASE_END .*checksum=(0x[0-9a-f]+)", out).group(1)
        runtime = re.search(r"runtime=(\S+)", out).group(1)
        with open(counts) as f:
            iters = [line.split() for line in f if line.startswith("iter ")]
        return int(iters[0][3]), checksum, runtime


def measure_model(elf, machine, plugin, model, kernels):
    """Returns ([(layer type, instructions)], whole inference's instructions, checksum)."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = os.path.join(tmp, "counts.txt")
        out = subprocess.run(
            [sys.executable, PROBE, "--qemu", elf, "--machine", machine, "--op", "custom",
             "--blob", model, "--case", "0", "--iterations", "1", "--warmup", "0", "--ops",
             "--kernels", kernels, "--qemu-arg=-plugin",
             f"--qemu-arg={plugin},out={counts},events=instructions"],
            capture_output=True, text=True, timeout=900, check=True).stdout
        types = re.findall(r"OP_SAMPLE case=0 op=\d+ type=(\S+)", out)
        checksum = re.search(r"CASE_END .*checksum=(0x[0-9a-f]+)", out).group(1)
        with open(counts) as f:
            lines = [line.split() for line in f if not line.startswith("#")]
        layers = [int(x[3]) for x in lines if x[0] == "op"]
        total = [int(x[3]) for x in lines if x[0] == "iter"][0]
        return list(zip(types, layers)), total, checksum


def model_macs(cli, path):
    """The model's MACs per inference as `mculab models inspect` counts them, or None."""
    if not cli:
        return None
    out = subprocess.run([cli, "models", "inspect", "--json", path], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)["macs"]


def models_table(args):
    elfs = {"an547": args.tflite_an547, "an500": args.tflite_an500}
    models = sorted((f, os.path.join(d, f)) for d, _, files in os.walk(args.models)
                    for f in files if f.endswith(".tflite"))
    summary = []
    for model, path in models:
        runs = {}
        for board, machine, cpu in BOARDS:
            for kernels in ("reference", "fast"):
                runs[(cpu, kernels)] = measure_model(elfs[board], machine, args.plugin, path,
                                                     kernels)
        cpus = [cpu for _, _, cpu in BOARDS]
        sums = {k: v[2] for k, v in runs.items()}
        same = len(set(sums.values())) == 1
        print(f"\n**{model}** (output checksum {'the same' if same else 'DIFFERS'} with every "
              f"set on every board)\n")
        print("| layer | type | " + " | ".join(f"{c} reference | {c} fast | ratio" for c in cpus)
              + " |")
        print("|---|---|" + "---:|---:|---:|" * len(cpus))
        rows = [("all", "inference")]
        n = len(runs[(cpus[0], "reference")][0])
        for i in range(n):
            rows.append((str(i), runs[(cpus[0], "reference")][0][i][0]))
        for i, (idx, kind) in enumerate(rows):
            cells = []
            for c in cpus:
                ref = runs[(c, "reference")][1] if i == 0 else runs[(c, "reference")][0][i - 1][1]
                fast = runs[(c, "fast")][1] if i == 0 else runs[(c, "fast")][0][i - 1][1]
                cells.append(f"{ref:,} | {fast:,} | {ref / max(fast, 1):.1f}x")
            print(f"| {idx} | {kind} | " + " | ".join(cells) + " |", flush=True)
        macs = model_macs(args.mculab, path)
        for c in cpus:
            layers, total, _ = runs[(c, "fast")]
            outside = total - sum(n for _, n in layers)
            summary.append((model, macs, c, runs[(c, "reference")][1], total, outside,
                            len(layers)))
    print("\n**Per model and board** (one inference; \"outside operators\": the fast run's "
          "instructions outside every operator's region)\n")
    print("| model | MACs | board | reference | per MAC | fast | per MAC | outside operators | "
          "per operator |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for model, macs, cpu, ref, fast, outside, ops in summary:
        per = (lambda v: f"{v / macs:.2f}") if macs else (lambda v: "-")
        print(f"| {model} | {macs:,} | {cpu} | {ref:,} | {per(ref)} | {fast:,} | {per(fast)} | "
              f"{outside:,} | {outside / max(ops, 1):,.0f} |" if macs else
              f"| {model} | - | {cpu} | {ref:,} | - | {fast:,} | - | {outside:,} | "
              f"{outside / max(ops, 1):,.0f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--an547", required=True, help="mculab-runner-an547.elf")
    ap.add_argument("--an500", required=True, help="mculab-runner-an500.elf")
    ap.add_argument("--plugin", required=True, help="libmculab-qemu-counters.so")
    ap.add_argument("--models", help="a folder of .tflite models: also their layers")
    ap.add_argument("--tflite-an547", help="mculab-tflite-runner-an547.elf (with --models)")
    ap.add_argument("--tflite-an500", help="mculab-tflite-runner-an500.elf (with --models)")
    ap.add_argument("--mculab", help="the mculab CLI (with --models): MACs per model")
    args = ap.parse_args()
    elfs = {"an547": args.an547, "an500": args.an500}
    print("| layer | board | reference | fast (set) | fast / MAC | CMSIS-NN | fast / CMSIS-NN |")
    print("|---|---|---:|---:|---:|---:|---:|")
    worst = 0.0
    mismatches = 0
    for board, machine, cpu in BOARDS:
        for name, op, params, macs, cmsis_m55, cmsis_m7 in LAYERS:
            ref, ref_sum, _ = measure(elfs[board], machine, args.plugin, op, params, "reference")
            fast, fast_sum, runtime = measure(elfs[board], machine, args.plugin, op, params, "fast")
            cmsis = cmsis_m55 if cpu == "M55" else cmsis_m7
            ratio = fast / cmsis
            worst = max(worst, ratio)
            same = "" if ref_sum == fast_sum else " **checksums differ**"
            mismatches += ref_sum != fast_sum
            print(f"| {name} | {cpu} | {ref:,} | {fast:,} ({runtime.split('-')[-1]}) | "
                  f"{fast / macs:.2f} | {cmsis:,} | {ratio:.2f}{same} |", flush=True)
    print(f"\nworst fast / CMSIS-NN: {worst:.2f}; checksum mismatches: {mismatches}")
    if args.models:
        models_table(args)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
